import type { Selectable } from "kysely";
import type { Db } from "../../kit/schema.js";
import type { RefreshTokenTable } from "../tables.js";

export type RefreshTokenRow = Selectable<RefreshTokenTable>;

export async function insertRefreshToken(db: Db, row: RefreshTokenRow): Promise<void> {
  await db.insertInto("refresh_tokens").values(row).execute();
}

export function refreshTokenByHash(db: Db, hash: string): Promise<RefreshTokenRow | undefined> {
  return db.selectFrom("refresh_tokens").selectAll().where("token_hash", "=", hash).executeTakeFirst();
}

/** Spends a token, forgetting the provider's refresh token it held (the next one holds it); false when it was already spent (a concurrent use). */
export async function spendRefreshToken(db: Db, hash: string, time: number): Promise<boolean> {
  const result = await db
    .updateTable("refresh_tokens")
    .set({ used_time: time, upstream_refresh_token: "" })
    .where("token_hash", "=", hash)
    .where("used_time", "is", null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Revokes every token of a family. */
export async function revokeRefreshFamily(db: Db, family: string, time: number): Promise<void> {
  await db.updateTable("refresh_tokens").set({ revoked_time: time }).where("family", "=", family).where("revoked_time", "is", null).execute();
}

/** Forgets families that ended before `before`. */
export async function pruneRefreshTokens(db: Db, before: number): Promise<void> {
  await db.deleteFrom("refresh_tokens").where("family_expire_time", "<", before).execute();
}
