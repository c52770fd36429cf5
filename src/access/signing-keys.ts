import { randomUUID } from "node:crypto";
import { exportJWK, generateKeyPair } from "jose";
import { deleteSigningKeys, insertSigningKey, listSigningKeys, type SigningKeyRow, type KeysDb as Db } from "../store/server-keys.js";

/**
 * The server's signing keys over time (docs/decisions.md, "Replicas"): every key is in the store,
 * published in the JWKS from its creation, signs from its `activate_time`, and is removed by a
 * later rotation once no token it signed can still be valid.
 */

/** The only algorithm the server signs with and accepts. */
export const SIGNING_ALGORITHM = "ES256";
/** Access tokens live at most this long (api-surface 5). */
export const MAX_TOKEN_TTL_SECONDS = 3600;
/** Seconds a token's `iat` may lie ahead of this server's clock (another replica's clock may run a little ahead). */
export const ISSUED_AT_SKEW_SECONDS = 30;
/** Every process reads the key set again at least this often, so a key added anywhere is published and used everywhere within it. */
export const KEY_RELOAD_INTERVAL_MS = 60_000;
/** `keys rotate`: a new key signs this long after it is added (published first, so verifiers that cache the JWKS hold it). */
export const DEFAULT_KEY_ACTIVATION_DELAY_MS = 10 * 60_000;
/**
 * A key is removed this long after a newer key became the signing key: the longest any process
 * may go on signing with it (until its next reload) plus the longest token lifetime and the clock skew.
 */
export const KEY_RETIREMENT_DELAY_MS = KEY_RELOAD_INTERVAL_MS + MAX_TOKEN_TTL_SECONDS * 1000 + ISSUED_AT_SKEW_SECONDS * 1000;

/** Keys in the order they take over signing: activation time, then creation time, then kid. */
export function bySigningOrder(rows: readonly SigningKeyRow[]): SigningKeyRow[] {
  return [...rows].sort((a, b) => Number(a.activate_time) - Number(b.activate_time) || Number(a.create_time) - Number(b.create_time) || (a.kid < b.kid ? -1 : a.kid > b.kid ? 1 : 0));
}

/**
 * The key that signs at `now`: the last to have been activated; when none is active yet, the
 * first to activate. Every process holding the same keys picks the same one. Undefined for none.
 */
export function signingKeyAt(ordered: readonly SigningKeyRow[], now: number): SigningKeyRow | undefined {
  let signing: SigningKeyRow | undefined;
  for (const row of ordered) if (Number(row.activate_time) <= now) signing = row;
  return signing ?? ordered[0];
}

/** The keys a newer signing key replaced more than KEY_RETIREMENT_DELAY_MS before `now`. */
export function retiredKeys(rows: readonly SigningKeyRow[], now: number): SigningKeyRow[] {
  const ordered = bySigningOrder(rows);
  const signing = signingKeyAt(ordered, now - KEY_RETIREMENT_DELAY_MS);
  return signing === undefined ? [] : ordered.slice(0, ordered.indexOf(signing));
}

/** A new ES256 key pair as a row, signing from `activateTime`. */
export async function newSigningKey(now: number, activateTime: number): Promise<SigningKeyRow> {
  const { privateKey, publicKey } = await generateKeyPair(SIGNING_ALGORITHM, { extractable: true });
  const kid = randomUUID();
  return {
    kid,
    algorithm: SIGNING_ALGORITHM,
    private_jwk: JSON.stringify({ ...(await exportJWK(privateKey)), kid, alg: SIGNING_ALGORITHM }),
    public_jwk: JSON.stringify({ ...(await exportJWK(publicKey)), kid, alg: SIGNING_ALGORITHM, use: "sig" }),
    create_time: now,
    activate_time: activateTime,
  };
}

export interface Rotation {
  /** The new key. */
  kid: string;
  /** When it starts signing, epoch ms. */
  activateTime: number;
  /** Keys removed as retired. */
  removed: string[];
}

/**
 * Adds a key that signs from `now + activationDelayMs` on (every process publishes it within
 * KEY_RELOAD_INTERVAL_MS, and accepts its tokens at once), and removes the keys retired by earlier
 * rotations (`retiredKeys`).
 */
export async function rotateSigningKeys(db: Db, now: number, activationDelayMs = DEFAULT_KEY_ACTIVATION_DELAY_MS): Promise<Rotation> {
  const row = await newSigningKey(now, now + activationDelayMs);
  await insertSigningKey(db, row);
  const retired = retiredKeys(await listSigningKeys(db), now).map((r) => r.kid);
  await deleteSigningKeys(db, retired);
  return { kid: row.kid, activateTime: Number(row.activate_time), removed: retired };
}

/** How a key stands at `now`: signing, pending (published, signs later), or verifying only (replaced). */
export function keyStates(rows: readonly SigningKeyRow[], now: number): Array<{ row: SigningKeyRow; state: "signing" | "pending" | "verifying" }> {
  const ordered = bySigningOrder(rows);
  const signing = signingKeyAt(ordered, now);
  return ordered.map((row) => ({ row, state: row === signing ? "signing" : Number(row.activate_time) > now ? "pending" : "verifying" }));
}
