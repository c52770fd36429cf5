import type { Readable } from "node:stream";
import { OutboundFetchError, outboundRequest, outboundStream, type OutboundPolicy, type OutboundStream } from "../../../outbound/fetch.js";
import { MANIFEST_MEDIA_TYPES, MAX_MANIFEST_BYTES } from "../manifest.js";

/**
 * The OCI Distribution client of one upstream registry: manifests and blobs by the upstream's
 * repository path, with its credentials (basic, and the Docker token flow when the upstream answers
 * 401 with a Bearer challenge: a token from its realm, asked with the basic credentials when there
 * are some), over the guarded outbound client (redirects followed to at most `MAX_REDIRECTS` hops,
 * each checked). Every failure is an UpstreamFailure.
 */

/** Most redirects one request to an upstream follows (blob storage of real registries redirects). */
export const MAX_REDIRECTS = 3;

/** The upstream failed to answer (unreachable, too slow, refused by the policy, or an unexpected status): `status` when it answered. */
export class UpstreamFailure extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = "UpstreamFailure";
  }
}

/** An upstream as its client needs it. */
export interface UpstreamTarget {
  /** Distinguishes cached tokens of upstreams. */
  uid: string;
  /** `https://host[:port]`. */
  url: string;
  username: string;
  /** Opened (not sealed). */
  password: string;
}

/** What the clients of every upstream share: the policy of their outbound requests and the tokens they were given. */
export interface UpstreamClients {
  policy: OutboundPolicy;
  /** Bearer tokens by upstream uid and scope, with when they stop being used (epoch ms). */
  tokens: Map<string, { token: string; until: number }>;
  now: () => number;
}

/** A manifest as the upstream answered it: its bytes, media type and the digest it named (if any). */
export interface UpstreamManifest {
  bytes: Buffer;
  mediaType?: string;
  digest?: string;
}

const MANIFEST_ACCEPT = MANIFEST_MEDIA_TYPES.join(", ");

/** A basic Authorization header, or none for anonymous. */
function basicAuth(target: UpstreamTarget): Record<string, string> {
  if (target.username === "") return {};
  return { authorization: `Basic ${Buffer.from(`${target.username}:${target.password}`).toString("base64")}` };
}

/** The parameters of a `Bearer realm="…",service="…",scope="…"` challenge, or undefined when it is not one. */
export function bearerChallengeOf(header: string | string[] | undefined): Record<string, string> | undefined {
  const value = Array.isArray(header) ? header.find((h) => /^bearer\s/i.test(h)) : header;
  if (value === undefined || !/^bearer\s/i.test(value)) return undefined;
  const params: Record<string, string> = {};
  for (const m of value.slice(7).matchAll(/([A-Za-z_]+)=(?:"((?:[^"\\]|\\.)*)"|([^,\s]*))/g)) params[m[1].toLowerCase()] = m[2] ?? m[3];
  return params.realm === undefined ? undefined : params;
}

/** Asks the realm of a Bearer challenge for a token (with the upstream's basic credentials when it has some). */
async function fetchToken(clients: UpstreamClients, target: UpstreamTarget, challenge: Record<string, string>, scope: string): Promise<{ token: string; until: number }> {
  let realm: URL;
  try {
    realm = new URL(challenge.realm);
  } catch {
    throw new UpstreamFailure(`${target.url} named a token realm that is not a URL`);
  }
  if (challenge.service !== undefined) realm.searchParams.set("service", challenge.service);
  realm.searchParams.set("scope", challenge.scope ?? scope);
  const answer = await outboundRequest(realm, { method: "GET", headers: { accept: "application/json", ...basicAuth(target) } }, { ...clients.policy, maxBytes: 1024 * 1024 }).catch((error: unknown) => {
    throw new UpstreamFailure(`the token realm of ${target.url} failed: ${(error as Error).message}`);
  });
  if (answer.status !== 200) throw new UpstreamFailure(`the token realm of ${target.url} answered HTTP ${answer.status}${answer.status === 401 ? " (the upstream's credentials were refused)" : ""}`, answer.status === 429 ? 429 : undefined);
  let body: { token?: unknown; access_token?: unknown; expires_in?: unknown };
  try {
    body = JSON.parse(answer.body.toString("utf8")) as typeof body;
  } catch {
    throw new UpstreamFailure(`the token realm of ${target.url} did not answer JSON`);
  }
  const token = typeof body.token === "string" ? body.token : typeof body.access_token === "string" ? body.access_token : undefined;
  if (token === undefined || token === "") throw new UpstreamFailure(`the token realm of ${target.url} answered no token`);
  const lifetime = typeof body.expires_in === "number" && body.expires_in > 0 ? body.expires_in : 60;
  // Used until shortly before it expires.
  return { token, until: clients.now() + Math.max(1, lifetime - 10) * 1000 };
}

/**
 * Sends a GET or HEAD of `path` (below `/v2/`) to the upstream, with its credentials: a cached token
 * for `scope`, else basic; a 401 with a Bearer challenge is answered with a token from its realm and
 * the request sent once more. Answers whatever status the upstream gives; throws UpstreamFailure when
 * it gives none.
 */
async function send(clients: UpstreamClients, target: UpstreamTarget, method: "GET" | "HEAD", path: string, accept: string, scope: string, signal?: AbortSignal): Promise<OutboundStream> {
  const url = new URL(`/v2/${path}`, target.url);
  const key = `${target.uid} ${scope}`;
  const attempt = (auth: Record<string, string>) =>
    outboundStream(url, { method, headers: { accept, ...auth } }, { ...clients.policy, maxRedirects: MAX_REDIRECTS }, signal).catch((error: unknown) => {
      throw new UpstreamFailure(error instanceof OutboundFetchError ? error.message : `${method} ${url.href} failed: ${(error as Error).message}`);
    });
  const cached = clients.tokens.get(key);
  const first = await attempt(cached !== undefined && cached.until > clients.now() ? { authorization: `Bearer ${cached.token}` } : basicAuth(target));
  if (first.status !== 401) return first;
  const challenge = bearerChallengeOf(first.headers["www-authenticate"]);
  first.body.destroy();
  if (challenge === undefined) throw new UpstreamFailure(`${target.url} refused the credentials (HTTP 401)`, 401);
  const token = await fetchToken(clients, target, challenge, scope);
  clients.tokens.set(key, token);
  const second = await attempt({ authorization: `Bearer ${token.token}` });
  if (second.status === 401) {
    second.body.destroy();
    throw new UpstreamFailure(`${target.url} refused the token its realm gave (HTTP 401)`, 401);
  }
  return second;
}

/** Reads a whole body of at most `limit` bytes. */
async function readAll(body: Readable, limit: number, what: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      size += (chunk as Buffer).byteLength;
      if (size > limit) throw new UpstreamFailure(`${what} is larger than ${limit} bytes`);
      chunks.push(chunk as Buffer);
    }
  } catch (error) {
    body.destroy();
    if (error instanceof UpstreamFailure) throw error;
    throw new UpstreamFailure(`${what} failed: ${(error as Error).message}`);
  }
  return Buffer.concat(chunks);
}

/** A status the upstream answered that is neither what was asked nor a 404: an UpstreamFailure naming it. */
function unexpected(target: UpstreamTarget, what: string, answer: OutboundStream): UpstreamFailure {
  answer.body.destroy();
  return new UpstreamFailure(`${target.url} answered HTTP ${answer.status} to ${what}`, answer.status);
}

const headerOf = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

/** The client of `target`, over the shared `clients`. */
export function upstreamClient(clients: UpstreamClients, target: UpstreamTarget) {
  const scopeOf = (repository: string) => `repository:${repository}:pull`;
  return {
    /** The digest tag or digest `reference` of `repository` names now (a HEAD), or undefined when the upstream has no such manifest. */
    async manifestDigest(repository: string, reference: string, signal?: AbortSignal): Promise<string | undefined> {
      const what = `HEAD ${repository}:${reference}`;
      const answer = await send(clients, target, "HEAD", `${repository}/manifests/${reference}`, MANIFEST_ACCEPT, scopeOf(repository), signal);
      answer.body.resume();
      if (answer.status === 404) return undefined;
      if (answer.status !== 200) throw unexpected(target, what, answer);
      const digest = headerOf(answer.headers["docker-content-digest"]);
      if (digest !== undefined) return digest;
      // No digest header: the manifest itself says it.
      const manifest = await this.manifest(repository, reference, signal);
      return manifest?.digest;
    },

    /** The manifest `reference` names in `repository`, or undefined when the upstream has none. */
    async manifest(repository: string, reference: string, signal?: AbortSignal): Promise<UpstreamManifest | undefined> {
      const what = `GET ${repository}/manifests/${reference}`;
      const answer = await send(clients, target, "GET", `${repository}/manifests/${reference}`, MANIFEST_ACCEPT, scopeOf(repository), signal);
      if (answer.status === 404) {
        answer.body.resume();
        return undefined;
      }
      if (answer.status !== 200) throw unexpected(target, what, answer);
      const bytes = await readAll(answer.body, MAX_MANIFEST_BYTES, `${target.url}: ${what}`);
      const mediaType = headerOf(answer.headers["content-type"])?.split(";")[0].trim();
      return { bytes, mediaType, digest: headerOf(answer.headers["docker-content-digest"]) };
    },

    /** The referrers index of `digest` in `repository`, or undefined when the upstream serves no referrers API (or none for it). */
    async referrers(repository: string, digest: string, signal?: AbortSignal): Promise<Buffer | undefined> {
      const answer = await send(clients, target, "GET", `${repository}/referrers/${digest}`, "application/vnd.oci.image.index.v1+json", scopeOf(repository), signal);
      if (answer.status !== 200) {
        answer.body.resume();
        return undefined;
      }
      return readAll(answer.body, MAX_MANIFEST_BYTES, `${target.url}: GET ${repository}/referrers/${digest}`);
    },

    /** The size of blob `digest` of `repository` (a HEAD), or undefined when the upstream has none. */
    async blobSize(repository: string, digest: string, signal?: AbortSignal): Promise<number | undefined> {
      const answer = await send(clients, target, "HEAD", `${repository}/blobs/${digest}`, "*/*", scopeOf(repository), signal);
      answer.body.resume();
      if (answer.status === 404) return undefined;
      if (answer.status !== 200) throw unexpected(target, `HEAD ${repository}/blobs/${digest}`, answer);
      const size = Number(headerOf(answer.headers["content-length"]));
      if (!Number.isSafeInteger(size) || size < 0) throw new UpstreamFailure(`${target.url} gave no size of blob ${digest}`);
      return size;
    },

    /** The body of blob `digest` of `repository`, streaming, and its size when announced; undefined when the upstream has none. */
    async blob(repository: string, digest: string, signal?: AbortSignal): Promise<{ body: Readable; size?: number } | undefined> {
      const answer = await send(clients, target, "GET", `${repository}/blobs/${digest}`, "*/*", scopeOf(repository), signal);
      if (answer.status === 404) {
        answer.body.resume();
        return undefined;
      }
      if (answer.status !== 200) throw unexpected(target, `GET ${repository}/blobs/${digest}`, answer);
      const size = Number(headerOf(answer.headers["content-length"]));
      return { body: answer.body, size: Number.isSafeInteger(size) ? size : undefined };
    },
  };
}

export type UpstreamClient = ReturnType<typeof upstreamClient>;
