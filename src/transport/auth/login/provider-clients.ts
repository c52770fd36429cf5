import * as client from "openid-client";
import type { LoginConfig } from "../../../config.js";
import { loginProviderOf, type LoginProvider } from "../../../domains/iam/index.js";
import type { Db } from "../../../domains/kit/schema.js";
import { OutboundFetchError, outboundRequest, type OutboundPolicy } from "../../../outbound/fetch.js";
import type { SecretBox } from "../../../store/secret-box.js";

/** A provider a person signs in with, discovered and ready for openid-client. */
export interface ProviderClient {
  /** The organization's IdentityProvider uid; "" for the server-wide provider. */
  uid: string;
  /** Set for an organization's provider. */
  organization?: LoginProvider;
  config: client.Configuration;
  scopes: string;
}

/**
 * A provider that could not be reached, or answered no usable discovery document; the message names
 * its issuer and the reason. The login routes answer it 502, never 500.
 */
export class ProviderUnreachable extends Error {
  constructor(
    readonly issuer: string,
    cause: unknown,
  ) {
    super(`the identity provider ${issuer} could not be reached: ${innermostMessage(cause)}`, { cause });
    this.name = "ProviderUnreachable";
  }
}

/** The message of the innermost cause (openid-client wraps our fetch's failure in "something went wrong"). */
function innermostMessage(error: unknown): string {
  let inner = error;
  while (inner instanceof Error && inner.cause instanceof Error) inner = inner.cause;
  return inner instanceof Error ? inner.message : String(inner);
}

/** Whether `error` is, or was caused by, a failure of our outbound fetch (refused, unreachable, too slow, too large). */
export function causedByOutboundFetch(error: unknown): boolean {
  for (let inner = error; inner instanceof Error; inner = inner.cause) if (inner instanceof OutboundFetchError) return true;
  return false;
}

/** Discovery documents are read again after this long, ms. */
const DISCOVERY_TTL_MS = 10 * 60_000;

/**
 * openid-client's outbound requests through the server's one guarded client (src/outbound/fetch.ts):
 * https on public addresses unless the operator relaxed it, one deadline, bounded bodies, no redirects.
 */
function guardedFetch(policy: OutboundPolicy): client.CustomFetch {
  return async (url, options) => {
    const body = options.body === undefined || options.body === null ? undefined : Buffer.from(options.body instanceof URLSearchParams ? options.body.toString() : typeof options.body === "string" ? options.body : new Uint8Array(options.body as ArrayBuffer));
    const method = options.method === "POST" ? "POST" : "GET";
    const answer = await outboundRequest(new URL(url), { method, headers: options.headers, body }, policy);
    return new Response(answer.status === 204 || answer.status === 304 ? null : new Uint8Array(answer.body), { status: answer.status, headers: { "content-type": "application/json" } });
  };
}

/** Resolves `identity_provider` parameters ("" for the server-wide one) to discovered clients, cached per issuer and client. */
export function createProviderClients(options: { db: Db; secrets: SecretBox; login: LoginConfig; callbackUrl: string; outbound: OutboundPolicy }) {
  const { db, secrets, login, callbackUrl, outbound } = options;
  const cache = new Map<string, { at: number; config: Promise<client.Configuration> }>();
  const customFetch = guardedFetch(outbound);

  function discover(issuer: string, clientId: string, clientSecret: string): Promise<client.Configuration> {
    const key = JSON.stringify([issuer, clientId, clientSecret]);
    const hit = cache.get(key);
    if (hit && Date.now() - hit.at < DISCOVERY_TTL_MS) return hit.config;
    const config = client
      .discovery(new URL(issuer), clientId, { redirect_uris: [callbackUrl] }, clientSecret === "" ? client.None() : client.ClientSecretPost(clientSecret), {
        execute: outbound.allowHttp ? [client.allowInsecureRequests] : [],
        [client.customFetch]: customFetch,
        timeout: Math.ceil(outbound.timeoutMs / 1000),
      })
      .then((config) => {
        config[client.customFetch] = customFetch;
        // The ID token's signature is checked against the provider's JWKS even though it came
        // straight from the token endpoint: over http (--allow-http-issuers) nothing else vouches for it.
        client.enableNonRepudiationChecks(config);
        return config;
      })
      .catch((error: unknown) => {
        throw new ProviderUnreachable(issuer, error);
      });
    config.catch(() => cache.delete(key));
    cache.set(key, { at: Date.now(), config });
    return config;
  }

  return {
    /** Whether the server-wide provider is configured. */
    hasServerWide: login.issuer !== "" && login.clientId !== "",
    /** Throws NOT_FOUND/FAILED_PRECONDITION (ApiError) for an unknown provider uid, ProviderUnreachable when its discovery fails. */
    async resolve(providerUid: string): Promise<ProviderClient> {
      if (providerUid === "") {
        return { uid: "", config: await discover(login.issuer, login.clientId, login.clientSecret), scopes: "openid email profile" };
      }
      const provider = await loginProviderOf(db, secrets, providerUid);
      const scopes = ["openid", "email", "profile", ...provider.additionalScopes].filter((s, i, all) => all.indexOf(s) === i).join(" ");
      return { uid: provider.uid, organization: provider, config: await discover(provider.issuer, provider.clientId, provider.clientSecret), scopes };
    },
  };
}

export type ProviderClients = ReturnType<typeof createProviderClients>;
