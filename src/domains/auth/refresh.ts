import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import type { PersonClaim } from "../../access/principal.js";
import { inTransaction } from "../../store/transaction.js";
import type { Database, Db } from "../kit/schema.js";
import { newSecret, secretHash } from "./store/secrets.js";
import { insertRefreshToken, pruneRefreshTokens, refreshTokenByHash, revokeRefreshFamily, spendRefreshToken, type RefreshTokenRow } from "./store/refresh-tokens.js";

/**
 * Refresh tokens (OAuth 2.0 Security BCP, refresh token rotation): each use spends the token and
 * answers the next of its family; a spent token used again revokes the whole family, so a stolen
 * token works once at most, for whichever of thief and owner comes first, and then for neither.
 */

/** Who the platform tokens a refresh token yields speak for. */
export interface SignedIn {
  identityUid: string;
  person: PersonClaim;
  /** The refresh token the person's provider issued, sealed (src/store/secret-box.ts); absent or "" when it issued none. */
  upstreamRefreshToken?: string;
}

export interface RefreshLifetimes {
  /** How long one refresh token lives unused, ms. */
  lifetimeMs: number;
  /** How long a family lives from the login that started it, ms: then the person signs in again. */
  maxLifetimeMs: number;
}

export interface IssuedRefreshToken {
  token: string;
  expiry: number;
}

async function issue(db: Db, signedIn: SignedIn, family: string, familyExpiry: number, lifetimes: RefreshLifetimes, time: number): Promise<IssuedRefreshToken> {
  const token = newSecret();
  const expiry = Math.min(time + lifetimes.lifetimeMs, familyExpiry);
  await insertRefreshToken(db, {
    token_hash: secretHash(token),
    family,
    identity_uid: signedIn.identityUid,
    person: JSON.stringify(signedIn.person),
    upstream_refresh_token: signedIn.upstreamRefreshToken ?? "",
    create_time: time,
    expire_time: expiry,
    family_expire_time: familyExpiry,
    used_time: null,
    revoked_time: null,
  });
  return { token, expiry };
}

/** The first refresh token of a login. */
export async function startRefreshFamily(db: Db, signedIn: SignedIn, lifetimes: RefreshLifetimes, time: number): Promise<IssuedRefreshToken> {
  await pruneRefreshTokens(db, time);
  return issue(db, signedIn, randomUUID(), time + lifetimes.maxLifetimeMs, lifetimes, time);
}

export type Rotation = { signedIn: SignedIn; next: IssuedRefreshToken } | { refused: string };

function signedInOf(row: RefreshTokenRow): SignedIn {
  return { identityUid: row.identity_uid, person: JSON.parse(row.person) as PersonClaim, upstreamRefreshToken: row.upstream_refresh_token };
}

/**
 * Who `token` speaks for, when it may be spent now (known, not revoked, not spent, not expired),
 * or why not (for the log, never for the caller); nothing is spent. A spent token presented again
 * revokes its family, as in `rotateRefreshToken`.
 */
export async function heldRefreshToken(db: Db, token: string, time: number): Promise<{ signedIn: SignedIn } | { refused: string }> {
  const row = await refreshTokenByHash(db, secretHash(token));
  if (!row) return { refused: "no such refresh token" };
  if (row.revoked_time !== null) return { refused: "the refresh token's family was revoked" };
  if (row.used_time !== null) {
    await revokeRefreshFamily(db, row.family, time);
    return { refused: "a spent refresh token was used again: its family is revoked" };
  }
  if (row.expire_time <= time) return { refused: "the refresh token has expired" };
  return { signedIn: signedInOf(row) };
}

/**
 * Spends `token` and answers the next of its family, or why not (for the log, never for the
 * caller). The next speaks for `renewed` when given (what the provider said at this refresh),
 * else for whom `token` spoke.
 */
export async function rotateRefreshToken(db: Kysely<Database>, token: string, lifetimes: RefreshLifetimes, time: number, renewed?: SignedIn): Promise<Rotation> {
  return inTransaction(db, undefined, async (trx): Promise<Rotation> => {
    const hash = secretHash(token);
    const row = await refreshTokenByHash(trx, hash);
    if (!row) return { refused: "no such refresh token" };
    if (row.revoked_time !== null) return { refused: "the refresh token's family was revoked" };
    if (row.used_time !== null || !(await spendRefreshToken(trx, hash, time))) {
      // Kept: the revocation commits with this answer.
      await revokeRefreshFamily(trx, row.family, time);
      return { refused: "a spent refresh token was used again: its family is revoked" };
    }
    if (row.expire_time <= time) return { refused: "the refresh token has expired" };
    const signedIn = renewed ?? signedInOf(row);
    return { signedIn, next: await issue(trx, signedIn, row.family, Number(row.family_expire_time), lifetimes, time) };
  });
}

/** Revokes the family of `token` (RFC 7009); nothing happens for a token that is not one. */
export async function revokeRefreshToken(db: Db, token: string, time: number): Promise<void> {
  const row = await refreshTokenByHash(db, secretHash(token));
  if (row) await revokeRefreshFamily(db, row.family, time);
}
