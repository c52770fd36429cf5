import { randomUUID } from "node:crypto";
import { decodeJwt, decodeProtectedHeader, importJWK, jwtVerify, SignJWT, type JSONWebKeySet, type JWK, type JWTPayload } from "jose";
import { ApiError, unauthenticated } from "../aip/errors.js";
import { insertSigningKey, listSigningKeys, type SigningKeyRow, type KeysDb as Db } from "../store/server-keys.js";
import {
  bySigningOrder,
  ISSUED_AT_SKEW_SECONDS,
  KEY_RELOAD_INTERVAL_MS,
  MAX_TOKEN_TTL_SECONDS,
  newSigningKey,
  SIGNING_ALGORITHM,
  signingKeyAt,
} from "./signing-keys.js";

export { ISSUED_AT_SKEW_SECONDS, MAX_TOKEN_TTL_SECONDS, SIGNING_ALGORITHM };

const VERIFIED_CACHE_SIZE = 10_000;
const MAX_CACHED_TOKEN_LENGTH = 4096;
/**
 * A token naming a key this process does not hold makes it read the keys again, at most once in
 * this interval, ms; within it, such tokens are refused without a read.
 */
export const UNKNOWN_KID_READ_INTERVAL_MS = 1000;

export interface IssueOptions {
  /** The identity uid. */
  subject: string;
  /** The API's or the registry host's public URL, or both. */
  audience: string | string[];
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

export interface TokenServiceOptions {
  /** The key set is read again when it is older than this, ms (KEY_RELOAD_INTERVAL_MS). */
  reloadIntervalMs?: number;
}

type KeyLike = Awaited<ReturnType<typeof importJWK>>;

interface LoadedKeys {
  /** Public keys by kid, imported. */
  verifying: Map<string, KeyLike>;
  /** Every key, in signing order. */
  ordered: SigningKeyRow[];
  jwks: JSONWebKeySet;
}

/** How far apart replicas' clocks may be (as the token exchange allows upstream tokens). */
const REPLICA_CLOCK_SKEW_MS = 30_000;

/** A token's `iat` in ms, read without verifying it; undefined when it has none. */
function issuedAtMs(token: string): number | undefined {
  try {
    const iat = decodeJwt(token).iat;
    return typeof iat === "number" ? iat * 1000 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Loads the server's signing keys from the store, creating the first one on first start, and
 * keeps them current: the set is read again when older than `reloadIntervalMs`, and at once when
 * a token names a key this process does not hold, at most once per UNKNOWN_KID_READ_INTERVAL_MS:
 * a token naming an unknown key waits at most for one read (the one in flight, or one it starts),
 * and within the interval after a read it started, is refused at once. So every replica publishes
 * and accepts a key another one (or `keys rotate`) added, all sign with the same key
 * (`signingKeyAt`), and forged tokens naming made-up keys cost one read per interval, not one each.
 */
export async function createTokenService(db: Db, issuer: string, now: () => number = Date.now, options: TokenServiceOptions = {}): Promise<TokenService> {
  const reloadIntervalMs = options.reloadIntervalMs ?? KEY_RELOAD_INTERVAL_MS;
  const clock = () => performance.now();
  const privateKeys = new Map<string, KeyLike>();
  let keys: LoadedKeys = { verifying: new Map(), ordered: [], jwks: { keys: [] } };
  let loadedAt = -Infinity;
  /** When (wall clock, ms) the set held now was read: a key added later signed no token issued before it. */
  let loadedAtWall = -Infinity;
  /** The read in flight. */
  let loading: Promise<void> | undefined;

  async function read(): Promise<void> {
    const rows = await listSigningKeys(db);
    const verifying = new Map<string, KeyLike>();
    for (const row of rows) verifying.set(row.kid, keys.verifying.get(row.kid) ?? (await importJWK(JSON.parse(row.public_jwk) as JWK, SIGNING_ALGORITHM)));
    keys = { verifying, ordered: bySigningOrder(rows), jwks: { keys: rows.map((r) => JSON.parse(r.public_jwk) as JWK) } };
  }

  /** A read of the key set that starts now, or the one in flight. */
  function reload(): Promise<void> {
    if (loading) return loading;
    const started = clock();
    const startedWall = now();
    const done = read()
      .then(() => void ((loadedAt = started), (loadedAtWall = startedWall)))
      .finally(() => (loading = undefined));
    loading = done;
    return done;
  }

  /** When (monotonic clock, ms) the last read for an unknown kid started. */
  let unknownKidReadAt = -Infinity;

  /**
   * Resolves once the keys were read for a token naming an unknown key: with the read in flight,
   * else a new one when none started for an unknown kid within UNKNOWN_KID_READ_INTERVAL_MS, else
   * at once, nothing read. Rejects when the read fails.
   */
  function readForUnknownKid(): Promise<void> {
    if (loading) return loading;
    if (clock() - unknownKidReadAt < UNKNOWN_KID_READ_INTERVAL_MS) return Promise.resolve();
    unknownKidReadAt = clock();
    return reload();
  }

  /** Starts a read in the background when the set is older than the reload interval; a failed read keeps the old set. */
  function refreshIfStale(): boolean {
    const stale = clock() - loadedAt >= reloadIntervalMs;
    if (stale) void reload().catch(() => {});
    return stale;
  }

  await reload();
  if (keys.ordered.length === 0) {
    await insertSigningKey(db, await newSigningKey(now(), now()));
    await reload();
  }

  async function privateKeyOf(row: SigningKeyRow): Promise<KeyLike> {
    let key = privateKeys.get(row.kid);
    if (key === undefined) {
      key = await importJWK(JSON.parse(row.private_jwk) as JWK, SIGNING_ALGORITHM);
      privateKeys.set(row.kid, key);
    }
    return key;
  }

  /** The public key a token names, reading the key set again when it is not known here. */
  async function keyOf(token: string): Promise<KeyLike> {
    let kid: unknown;
    try {
      kid = decodeProtectedHeader(token).kid;
    } catch {
      kid = undefined;
    }
    if (typeof kid !== "string") throw unauthenticated("the token is not a valid token of this server");
    let key = keys.verifying.get(kid);
    if (key === undefined) {
      // A key another replica (or `keys rotate`) added after the set here was read signed no token
      // issued before that read (clocks apart by up to the tolerance): such a token's key will not be
      // found by reading again, so it is refused at once rather than waiting for a read.
      const issuedAt = issuedAtMs(token);
      if (issuedAt !== undefined && issuedAt + REPLICA_CLOCK_SKEW_MS < loadedAtWall) throw unauthenticated("the token is not a valid token of this server");
      await readForUnknownKid();
      key = keys.verifying.get(kid);
    }
    if (key === undefined) throw unauthenticated("the token is not a valid token of this server");
    return key;
  }

  /** Tokens already verified, by audience and token, until they expire: verification is most of a call's cost. */
  const verified = new Map<string, JWTPayload & { sub: string; exp: number }>();

  return {
    issuer,
    async issue({ subject, audience, ttlSeconds = MAX_TOKEN_TTL_SECONDS, claims = {} }) {
      if (refreshIfStale()) await loading?.catch(() => {});
      const ttl = Math.max(1, Math.min(ttlSeconds, MAX_TOKEN_TTL_SECONDS));
      const issuedAt = Math.floor(now() / 1000);
      const signing = signingKeyAt(keys.ordered, now())!;
      const token = await new SignJWT(claims)
        .setProtectedHeader({ alg: SIGNING_ALGORITHM, kid: signing.kid, typ: "JWT" })
        .setIssuer(issuer)
        .setSubject(subject)
        .setAudience(Array.isArray(audience) && audience.length === 1 ? audience[0] : audience)
        .setIssuedAt(issuedAt)
        .setExpirationTime(issuedAt + ttl)
        .setJti(randomUUID())
        .sign(await privateKeyOf(signing));
      return { token, expiry: new Date((issuedAt + ttl) * 1000) };
    },
    async verify(token, audience) {
      refreshIfStale();
      const key = `${audience} ${token}`;
      const cached = verified.get(key);
      if (cached && cached.exp * 1000 > now()) return cached;
      verified.delete(key);
      // Outside the try: a store failure while reading the keys again is not the token's fault.
      const publicKey = await keyOf(token);
      try {
        const { payload } = await jwtVerify(token, publicKey, {
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
    jwks() {
      refreshIfStale();
      return keys.jwks;
    },
  };
}
