import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { Kysely } from "kysely";
import { inTransaction } from "../../store/transaction.js";
import type { Database, Db } from "../kit/schema.js";
import {
  deleteRegistryPassword,
  insertRegistryPassword,
  liveRegistryPasswords,
  markRegistryPasswordUsed,
  pruneRegistryPasswords,
  registryPasswordById,
  type RegistryPasswordRow,
} from "./store/registry-passwords.js";

/**
 * A person's registry passwords (docs/decisions.md, "A person's registry password"): Basic
 * credentials for registry clients without a credential helper, made by the signed-in person for
 * their own identity, shown once, kept as a salted HMAC, revoked by id.
 */

/** Prefix of every registry password, so secret scanners and people recognize one. */
export const REGISTRY_PASSWORD_PREFIX = "prp_";
/** How many live registry passwords one identity may hold. */
export const MAX_REGISTRY_PASSWORDS = 10;
/** The longest description kept, in characters. */
export const MAX_REGISTRY_PASSWORD_DESCRIPTION = 256;
/** Bounds of a lifetime, when one is given, ms. */
export const MIN_REGISTRY_PASSWORD_TTL_MS = 60_000;
export const MAX_REGISTRY_PASSWORD_TTL_MS = 8760 * 3_600_000;

/** `prp_<16 hex id>_<256 random bits, base64url>`. */
const PASSWORD = /^prp_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;

/** What is kept of `secret`: HMAC-SHA256 under the row's own salt, hex. */
function secretHash(salt: string, secret: string): string {
  return createHmac("sha256", Buffer.from(salt, "hex")).update(secret).digest("hex");
}

/** A registry password as its owner sees it listed: never its secret. */
export interface RegistryPassword {
  id: string;
  identityUid: string;
  description: string;
  createTime: number;
  /** Undefined: it never expires. */
  expireTime?: number;
  lastUsedTime?: number;
}

function registryPasswordOf(row: RegistryPasswordRow): RegistryPassword {
  return {
    id: row.id,
    identityUid: row.identity_uid,
    description: row.description,
    createTime: Number(row.create_time),
    ...(row.expire_time === null ? {} : { expireTime: Number(row.expire_time) }),
    ...(row.last_used_time === null ? {} : { lastUsedTime: Number(row.last_used_time) }),
  };
}

export type RegistryPasswordMade = { made: RegistryPassword; password: string } | { tooMany: number };

/**
 * A new registry password of `identityUid`, its password answered this once; `tooMany` when the
 * identity already holds MAX_REGISTRY_PASSWORDS that have not expired (those that have are forgotten).
 * `ttlMs` undefined: it never expires.
 */
export async function createRegistryPassword(db: Kysely<Database>, request: { identityUid: string; description: string; ttlMs?: number }, time: number): Promise<RegistryPasswordMade> {
  return inTransaction(db, undefined, async (trx): Promise<RegistryPasswordMade> => {
    await pruneRegistryPasswords(trx, request.identityUid, time);
    const held = await liveRegistryPasswords(trx, request.identityUid, time);
    if (held.length >= MAX_REGISTRY_PASSWORDS) return { tooMany: held.length };
    const id = randomBytes(8).toString("hex");
    const secret = randomBytes(32).toString("base64url");
    const salt = randomBytes(16).toString("hex");
    const row: RegistryPasswordRow = {
      id,
      identity_uid: request.identityUid,
      description: request.description,
      salt,
      secret_hash: secretHash(salt, secret),
      create_time: time,
      expire_time: request.ttlMs === undefined ? null : time + request.ttlMs,
      last_used_time: null,
    };
    await insertRegistryPassword(trx, row);
    return { made: registryPasswordOf(row), password: `${REGISTRY_PASSWORD_PREFIX}${id}_${secret}` };
  });
}

/** The registry passwords of `identityUid` that have not expired at `time`, oldest first. */
export async function listRegistryPasswords(db: Db, identityUid: string, time: number): Promise<RegistryPassword[]> {
  return (await liveRegistryPasswords(db, identityUid, time)).map(registryPasswordOf);
}

/** Revokes (deletes) the registry password `id` of `identityUid`; false when it holds none by that id. */
export function revokeRegistryPassword(db: Db, identityUid: string, id: string): Promise<boolean> {
  return deleteRegistryPassword(db, identityUid, id);
}

/** Whether `password` has the form of a registry password (the registry host then asks `acceptRegistryPassword`). */
export function isRegistryPassword(password: string): boolean {
  return password.startsWith(REGISTRY_PASSWORD_PREFIX);
}

/** A registry password the registry host accepted: its id, the identity it speaks for, and until when (undefined: no end). */
export interface AcceptedRegistryPassword {
  id: string;
  identity: string;
  expireTime?: number;
}

/**
 * The identity `password` speaks for, when it is a registry password of `username` (that identity's
 * uid) that has not expired at `time`; else undefined (which of these failed is not told). Marks
 * it used (best effort).
 */
export async function acceptRegistryPassword(db: Db, username: string, password: string, time: number): Promise<AcceptedRegistryPassword | undefined> {
  const parts = PASSWORD.exec(password);
  if (!parts) return undefined;
  const row = await registryPasswordById(db, parts[1]);
  if (!row || row.identity_uid !== username) return undefined;
  const given = Buffer.from(secretHash(row.salt, parts[2]), "hex");
  const kept = Buffer.from(row.secret_hash, "hex");
  if (given.length !== kept.length || !timingSafeEqual(given, kept)) return undefined;
  if (row.expire_time !== null && Number(row.expire_time) <= time) return undefined;
  // Best effort: when the store is busy, the pull still goes on.
  await markRegistryPasswordUsed(db, row.id, time).catch(() => undefined);
  return { id: row.id, identity: row.identity_uid, ...(row.expire_time === null ? {} : { expireTime: Number(row.expire_time) }) };
}

/** Whether registry password `id` still speaks for `identityUid` at `time`: not revoked, not expired (what each use of its registry tokens checks). */
export async function registryPasswordLive(db: Db, id: string, identityUid: string, time: number): Promise<boolean> {
  const row = await registryPasswordById(db, id);
  return row !== undefined && row.identity_uid === identityUid && (row.expire_time === null || Number(row.expire_time) > time);
}
