import type { Transaction } from "kysely";
import { TagSchema } from "../../../gen/platform/registry/v2/tag_pb.js";
import type { Database } from "../kit/schema.js";
import { recordHostChange, type HostEventOptions } from "./events.js";
import { findTagByName, upsertTag, type TagRow } from "./store/tags.js";
import { tagFromRow } from "./tag-mapper.js";

/**
 * Points tag `name` of a repo at `digest` as a push (`upsertTag`: its push time is now, moved or
 * not) and records the move in the outbox in the same transaction:
 * `<prefix>.api.platform.registry.tag.created.v1` for a new tag, `...tag.updated.v1` when it
 * moved, nothing when it already pointed there; the body is the
 * Tag (`platform.registry.v2.Tag`), the actor names the path (`act.via`). The registry
 * host's pushes and `registry import` move tags through it; CreateTag's event comes from the
 * RPC (`event-interceptor.ts`).
 */
export async function moveTagWithEvent(
  trx: Transaction<Database>,
  repo: { uid: string; group_uid: string; name: string },
  tag: { name: string; digest: string },
  options: HostEventOptions,
): Promise<TagRow> {
  const before = await findTagByName(trx, repo.uid, tag.name);
  const row = await upsertTag(trx, repo.uid, tag, options.now, { pushed: true });
  if (before && before.digest === row.digest) return row;
  await recordTagChange(trx, before ? "updated" : "created", repo, row, options);
  return row;
}

/**
 * Records the deletion of `tags` (rows already deleted, or about to be, in `trx`):
 * `<prefix>.api.platform.registry.tag.deleted.v1` each, the Tag as it was. The registry host's
 * `DELETE /v2/<name>/manifests/<tag or digest>` uses it; DeleteTag's event comes from the RPC.
 */
export async function recordTagDeletions(
  trx: Transaction<Database>,
  repo: { group_uid: string },
  tags: TagRow[],
  options: HostEventOptions,
): Promise<void> {
  for (const row of tags) await recordTagChange(trx, "deleted", repo, row, options);
}

function recordTagChange(trx: Transaction<Database>, verb: string, repo: { group_uid: string }, row: TagRow, options: HostEventOptions): Promise<void> {
  const change = { name: `platform.registry.tag.${verb}`, subject: row.uid, group: repo.group_uid, schema: TagSchema, message: tagFromRow(row) };
  return recordHostChange(trx, change, options);
}
