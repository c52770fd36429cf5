import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { Db } from "../kit/schema.js";

/**
 * Pull token passwords: made here, kept as hashes, and accepted here for the registry host.
 */

/** Prefix of every pull token password, so secret scanners and people recognize one. */
const PASSWORD_PREFIX = "pap_";

/** What the store keeps of a password: its SHA-256, hex (a random secret needs no slow hash). */
export const passwordHash = (password: string) => createHash("sha256").update(password).digest("hex");

/** A new password: the prefix and 256 random bits, base64url. */
export function newPassword(): string {
  return `${PASSWORD_PREFIX}${randomBytes(32).toString("base64url")}`;
}

/** A pull token the registry host accepted: its identity, and until when. */
export interface AcceptedPullToken {
  readonly identity: string;
  /** Epoch milliseconds. */
  readonly expireTime: number;
}

/**
 * The pull token `username` (its identity's uid) whose password is `password`, when it exists and
 * has not expired at `time`; else undefined (which of the three is not told). Marks it seen.
 */
export async function acceptPullToken(db: Db, username: string, password: string, time: number): Promise<AcceptedPullToken | undefined> {
  if (!password.startsWith(PASSWORD_PREFIX) || username.length > 1024) return undefined;
  const row = await db.selectFrom("identities").select(["uid", "pull_token_hash", "pull_token_expire_time"]).where("uid", "=", username).executeTakeFirst();
  if (!row || row.pull_token_hash === "" || row.pull_token_expire_time === null) return undefined;
  const given = Buffer.from(passwordHash(password), "hex");
  const kept = Buffer.from(row.pull_token_hash, "hex");
  if (given.length !== kept.length || !timingSafeEqual(given, kept)) return undefined;
  const expireTime = Number(row.pull_token_expire_time);
  if (expireTime <= time) return undefined;
  // Best effort: when the store is busy, the pull still goes on.
  await db
    .updateTable("identities")
    .set({ last_seen_time: time })
    .where("uid", "=", row.uid)
    .execute()
    .catch(() => undefined);
  return { identity: row.uid, expireTime };
}

/** Whether the pull token `identity` still exists and has not expired at `time` (deleting it revokes it at once). */
export async function pullTokenLive(db: Db, identity: string, time: number): Promise<boolean> {
  const row = await db.selectFrom("identities").select("pull_token_expire_time").where("uid", "=", identity).where("pull_token_hash", "!=", "").executeTakeFirst();
  return row !== undefined && row.pull_token_expire_time !== null && Number(row.pull_token_expire_time) > time;
}
