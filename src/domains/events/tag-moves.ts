import type { Transaction } from "kysely";
import type { Database } from "../../store/tables.js";
import { findTagByName, upsertTag, type TagRow } from "../registry/store/tags.js";
import { emitEvent } from "./store/outbox.js";

/**
 * Points tag `name` of a repo at `digest` (`upsertTag`) and records the move in the outbox in
 * the same transaction: `<prefix>.api.registry.tag.created.v1` for a new tag,
 * `...tag.updated.v1` when it moved, nothing when it already pointed there. The registry
 * host's pushes and `registry import` move tags through it; CreateTag's event comes from the
 * RPC (`event-interceptor.ts`).
 */
export async function moveTagWithEvent(
  trx: Transaction<Database>,
  repo: { uid: string; group_uid: string; name: string },
  tag: { name: string; digest: string },
  options: { now: number; typePrefix: string; via: string },
): Promise<TagRow> {
  const before = await findTagByName(trx, repo.uid, tag.name);
  const row = await upsertTag(trx, repo.uid, tag, options.now);
  if (before && before.digest === row.digest) return row;
  await emitEvent(
    trx,
    {
      type: `${options.typePrefix}.api.registry.tag.${before ? "updated" : "created"}.v1`,
      subject: row.uid,
      group: repo.group_uid,
      actor: { subject: "", act: { via: options.via } },
      body: { tag: { uid: row.uid, name: row.name, digest: row.digest }, repo: repo.name, ...(before ? { previousDigest: before.digest } : {}) },
    },
    options.now,
  );
  return row;
}
