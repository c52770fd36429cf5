import { createLocalJWKSet, type JSONWebKeySet, type JWTVerifyGetKey } from "jose";
import { fetchJson as fetchOutboundJson } from "../../outbound/fetch.js";

/**
 * Discovery documents and JWKS of other OIDC issuers (the upstream side of the workload
 * identity exchange), fetched on demand and cached per issuer.
 *
 * Callers must only ask for an issuer they have already matched against an identity. Every
 * fetch goes through `outbound-fetch.ts`: https on public addresses only unless the operator
 * allows more, no redirects, one deadline and a size cap per document.
 */
export interface UpstreamKeys {
  /** A key resolver for `jwtVerify` over the issuer's published keys. Rejects with UpstreamFetchError. */
  keysFor(issuer: string): JWTVerifyGetKey;
}

export interface UpstreamKeysOptions {
  /** How long a discovery document and JWKS are used before being fetched again, ms. */
  cacheTtlMs?: number;
  /** On an unknown `kid`, the JWKS is fetched again, at most this often per issuer, ms. */
  refetchIntervalMs?: number;
  /** After a failed fetch, the issuer is not tried again for this long (the failure is answered), ms. */
  failureBackoffMs?: number;
  /** Per request, ms. */
  timeoutMs?: number;
  /** Largest discovery document or JWKS accepted, bytes. */
  maxBytes?: number;
  /** Also plain http issuers and JWKS URLs (default: https only). */
  allowHttp?: boolean;
  /** Also issuers and JWKS URLs on loopback, private, link-local and other non-public addresses (default: public only). */
  allowPrivateAddresses?: boolean;
  /** Issuers kept at once; the least recently added goes first. */
  maxIssuers?: number;
  now?: () => number;
}

/** A discovery document or JWKS that could not be fetched or is not valid. */
export class UpstreamFetchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UpstreamFetchError";
  }
}

export const DEFAULT_UPSTREAM_OPTIONS = {
  cacheTtlMs: 10 * 60_000,
  refetchIntervalMs: 60_000,
  failureBackoffMs: 5_000,
  timeoutMs: 5_000,
  maxBytes: 256 * 1024,
  maxIssuers: 1_000,
  allowHttp: false,
  allowPrivateAddresses: false,
};

interface IssuerEntry {
  jwksUri: string;
  resolve: JWTVerifyGetKey;
  /** When the JWKS was last fetched. */
  fetchedAt: number;
}

/** The OIDC discovery URL of an issuer: its URL, without a trailing slash, + `/.well-known/openid-configuration`. */
export function discoveryUrl(issuer: string): string {
  return `${issuer.replace(/\/+$/, "")}/.well-known/openid-configuration`;
}

function httpUrl(value: unknown, what: string): URL {
  let url: URL;
  try {
    url = new URL(String(value));
  } catch {
    throw new UpstreamFetchError(`${what} is not a URL`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new UpstreamFetchError(`${what} is not an http(s) URL`);
  return url;
}

export function createUpstreamKeys(options: UpstreamKeysOptions = {}): UpstreamKeys {
  const opts = { ...DEFAULT_UPSTREAM_OPTIONS, ...options };
  const policy = { allowHttp: opts.allowHttp, allowPrivateAddresses: opts.allowPrivateAddresses, timeoutMs: opts.timeoutMs, maxBytes: opts.maxBytes };
  const now = options.now ?? Date.now;
  const entries = new Map<string, IssuerEntry>();
  const failures = new Map<string, { at: number; error: UpstreamFetchError }>();
  /** Fetches in flight, per issuer: concurrent exchanges share one. */
  const inflight = new Map<string, Promise<IssuerEntry>>();

  async function fetchJson(url: URL, what: string): Promise<unknown> {
    try {
      return await fetchOutboundJson(url, policy);
    } catch (error) {
      throw new UpstreamFetchError(`the ${what}: ${(error as Error).message}`);
    }
  }

  async function fetchJwks(jwksUri: string): Promise<JWTVerifyGetKey> {
    const jwks = await fetchJson(new URL(jwksUri), "JWKS");
    try {
      return createLocalJWKSet(jwks as JSONWebKeySet);
    } catch (error) {
      throw new UpstreamFetchError(`the JWKS ${jwksUri} is not a valid key set: ${(error as Error).message}`);
    }
  }

  async function load(issuer: string): Promise<IssuerEntry> {
    const url = httpUrl(discoveryUrl(issuer), "the issuer");
    const doc = await fetchJson(url, "discovery document");
    if (typeof doc !== "object" || doc === null) throw new UpstreamFetchError(`the discovery document ${url.href} is not an object`);
    const { issuer: published, jwks_uri: jwksUri } = doc as { issuer?: unknown; jwks_uri?: unknown };
    // OpenID Connect Discovery 1.0, 4.3: the document must name the issuer it was fetched for.
    if (published !== issuer) throw new UpstreamFetchError(`the discovery document ${url.href} names issuer ${JSON.stringify(published)}`);
    const jwks = httpUrl(jwksUri, "the discovery document's jwks_uri");
    const at = now();
    return { jwksUri: jwks.href, resolve: await fetchJwks(jwks.href), fetchedAt: at };
  }

  function remember(issuer: string, entry: IssuerEntry) {
    entries.delete(issuer);
    if (entries.size >= opts.maxIssuers) entries.delete(entries.keys().next().value!);
    entries.set(issuer, entry);
    failures.delete(issuer);
  }

  /** One fetch per issuer at a time; a failure is remembered for failureBackoffMs. */
  function once(issuer: string, work: () => Promise<IssuerEntry>): Promise<IssuerEntry> {
    const running = inflight.get(issuer);
    if (running) return running;
    const failed = failures.get(issuer);
    if (failed && now() - failed.at < opts.failureBackoffMs) return Promise.reject(failed.error);
    const promise = work()
      .then((entry) => {
        remember(issuer, entry);
        return entry;
      })
      .catch((error: unknown) => {
        const wrapped = error instanceof UpstreamFetchError ? error : new UpstreamFetchError(String(error));
        if (failures.size >= opts.maxIssuers) failures.delete(failures.keys().next().value!);
        failures.set(issuer, { at: now(), error: wrapped });
        throw wrapped;
      })
      .finally(() => inflight.delete(issuer));
    inflight.set(issuer, promise);
    return promise;
  }

  async function current(issuer: string): Promise<IssuerEntry> {
    const entry = entries.get(issuer);
    if (entry && now() - entry.fetchedAt < opts.cacheTtlMs) return entry;
    return once(issuer, () => load(issuer));
  }

  return {
    keysFor(issuer) {
      return async (header, token) => {
        const entry = await current(issuer);
        try {
          return await entry.resolve(header, token);
        } catch (error) {
          // A key rotated in since the last fetch: fetch the JWKS again, at most once a refetch interval.
          if ((error as { code?: string }).code !== "ERR_JWKS_NO_MATCHING_KEY") throw error;
          if (now() - entry.fetchedAt < opts.refetchIntervalMs) throw error;
          const at = now();
          const fresh = await once(issuer, async () => ({ jwksUri: entry.jwksUri, resolve: await fetchJwks(entry.jwksUri), fetchedAt: at }));
          return fresh.resolve(header, token);
        }
      };
    },
  };
}
