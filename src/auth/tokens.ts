import { randomUUID } from "node:crypto";
import {
  createLocalJWKSet,
  exportJWK,
  generateKeyPair,
  importJWK,
  jwtVerify,
  SignJWT,
  type JSONWebKeySet,
  type JWK,
  type JWTPayload,
} from "jose";
import { ApiError, unauthenticated } from "../api/errors.js";
import { insertSigningKey, listSigningKeys } from "../store/server-keys.js";
import type { Db } from "../store/tables.js";

/** The only algorithm the server signs with and accepts. */
export const SIGNING_ALGORITHM = "ES256";
/** Access tokens live at most this long (api-surface 5). */
export const MAX_TOKEN_TTL_SECONDS = 3600;
/** Seconds a token's `iat` may lie ahead of this server's clock (another replica's clock may run a little ahead). */
export const ISSUED_AT_SKEW_SECONDS = 30;
const VERIFIED_CACHE_SIZE = 10_000;
const MAX_CACHED_TOKEN_LENGTH = 4096;

export interface IssueOptions {
  /** The identity uid. */
  subject: string;
  /** The API's or the registry's public URL. */
  audience: string;
  /** Seconds, capped at MAX_TOKEN_TTL_SECONDS. */
  ttlSeconds?: number;
  /** Extra claims (e.g. registry access). */
  claims?: Record<string, unknown>;
}

export interface TokenService {
  readonly issuer: string;
  issue(options: IssueOptions): Promise<{ token: string; expiry: Date }>;
  /**
   * Verifies signature, algorithm, issuer, audience, expiry and issue time (all required): a token
   * whose `exp - iat` exceeds MAX_TOKEN_TTL_SECONDS, or whose `iat` lies more than
   * ISSUED_AT_SKEW_SECONDS ahead, is not one this server issued. Throws UNAUTHENTICATED naming what failed.
   */
  verify(token: string, audience: string): Promise<JWTPayload & { sub: string }>;
  /** The public keys, as published at the JWKS URL. */
  jwks(): JSONWebKeySet;
}

/**
 * Loads the server's signing keys from the store, creating the first one on
 * first start. Every replica reads the same keys, so any replica verifies any token.
 */
export async function createTokenService(db: Db, issuer: string, now: () => number = Date.now): Promise<TokenService> {
  let rows = await listSigningKeys(db);
  if (rows.length === 0) {
    const { privateKey, publicKey } = await generateKeyPair(SIGNING_ALGORITHM, { extractable: true });
    const kid = randomUUID();
    const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: SIGNING_ALGORITHM, use: "sig" };
    const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: SIGNING_ALGORITHM };
    await insertSigningKey(db, {
      kid,
      algorithm: SIGNING_ALGORITHM,
      private_jwk: JSON.stringify(privateJwk),
      public_jwk: JSON.stringify(publicJwk),
      create_time: now(),
    });
    rows = await listSigningKeys(db);
  }
  const current = rows[0];
  const signingKey = await importJWK(JSON.parse(current.private_jwk) as JWK, SIGNING_ALGORITHM);
  const keySet: JSONWebKeySet = { keys: rows.map((r) => JSON.parse(r.public_jwk) as JWK) };
  const localKeys = createLocalJWKSet(keySet);
  /** Tokens already verified, by audience and token, until they expire: verification is most of a call's cost. */
  const verified = new Map<string, JWTPayload & { sub: string; exp: number }>();

  return {
    issuer,
    async issue({ subject, audience, ttlSeconds = MAX_TOKEN_TTL_SECONDS, claims = {} }) {
      const ttl = Math.max(1, Math.min(ttlSeconds, MAX_TOKEN_TTL_SECONDS));
      const issuedAt = Math.floor(now() / 1000);
      const token = await new SignJWT(claims)
        .setProtectedHeader({ alg: SIGNING_ALGORITHM, kid: current.kid, typ: "JWT" })
        .setIssuer(issuer)
        .setSubject(subject)
        .setAudience(audience)
        .setIssuedAt(issuedAt)
        .setExpirationTime(issuedAt + ttl)
        .setJti(randomUUID())
        .sign(signingKey);
      return { token, expiry: new Date((issuedAt + ttl) * 1000) };
    },
    async verify(token, audience) {
      const key = `${audience} ${token}`;
      const cached = verified.get(key);
      if (cached && cached.exp * 1000 > now()) return cached;
      verified.delete(key);
      try {
        const { payload } = await jwtVerify(token, localKeys, {
          algorithms: [SIGNING_ALGORITHM],
          issuer,
          audience,
          requiredClaims: ["exp", "sub", "iat"],
          currentDate: new Date(now()),
        });
        const claims = payload as JWTPayload & { sub: string; exp: number; iat: number };
        if (claims.exp - claims.iat > MAX_TOKEN_TTL_SECONDS) throw unauthenticated(`the token lives longer than ${MAX_TOKEN_TTL_SECONDS} s`);
        if (claims.iat > now() / 1000 + ISSUED_AT_SKEW_SECONDS) throw unauthenticated("the token's iat claim lies in the future");
        if (token.length <= MAX_CACHED_TOKEN_LENGTH) {
          if (verified.size >= VERIFIED_CACHE_SIZE) verified.delete(verified.keys().next().value!);
          verified.set(key, claims);
        }
        return claims;
      } catch (error) {
        if (error instanceof ApiError) throw error;
        const code = (error as { code?: string }).code ?? "";
        const reason =
          code === "ERR_JWT_EXPIRED"
            ? "the token has expired"
            : code === "ERR_JWT_CLAIM_VALIDATION_FAILED"
              ? `the token's ${(error as { claim?: string }).claim ?? "claims"} claim is not accepted here`
              : "the token is not a valid token of this server";
        throw unauthenticated(reason);
      }
    },
    jwks: () => keySet,
  };
}
