import type { Insertable, Selectable } from "kysely";
import type { Page } from "../../../aip/pagination.js";
import { selfAndAncestors, subtreeRange } from "../../../aip/uidp.js";
import { keyTaken } from "../../../store/errors.js";
import type { ListScope } from "../../kit/list-query.js";
import { deleteByUid, getByUid, listPage, resourceTable, TIMES_ORDERABLE, unlessTaken, updateByUid } from "../../kit/resource-table.js";
import type { Db } from "../../kit/schema.js";
import type { RetentionPolicyTable } from "../tables.js";
import { getGroup } from "../../iam/index.js";

export type RetentionPolicyRow = Selectable<RetentionPolicyTable>;

/** Sortable policy fields: API name to column. */
export const retentionPolicyOrderable = { ...TIMES_ORDERABLE };

const POLICIES = resourceTable("retention_policies", "retention policy", { parent: "group_uid", ownerSegments: 1 });

function normalized(row: RetentionPolicyRow): RetentionPolicyRow {
  // bigint columns come back as strings from some drivers.
  return {
    ...row,
    keep_last: Number(row.keep_last),
    expire_after_ms: Number(row.expire_after_ms),
    untagged_grace_ms: Number(row.untagged_grace_ms),
    create_time: Number(row.create_time),
    update_time: Number(row.update_time),
  };
}

/** The patterns a `retention_policies.keep_tags` column holds (a JSON array of strings). */
export function keepTagsOf(row: Pick<RetentionPolicyRow, "keep_tags">): string[] {
  return JSON.parse(row.keep_tags) as string[];
}

/** Throws NOT_FOUND when the policy does not exist. */
export async function getRetentionPolicy(db: Db, uid: string): Promise<RetentionPolicyRow> {
  return normalized(await getByUid(db, POLICIES, uid));
}

/** One page (up to `limit + 1` rows, in `page.order`) and the count of all matches. */
export async function listRetentionPolicies(db: Db, { repoUid, uidp, visible }: ListScope & { repoUid?: string }, page: Page): Promise<{ rows: RetentionPolicyRow[]; total: number }> {
  const { rows, total } = await listPage(db, POLICIES, { equals: { repo_uid: repoUid }, uidp, visible }, page);
  return { rows: rows.map(normalized), total };
}

function taken(row: { group_uid: string; repo_uid: string }) {
  const target = row.repo_uid === "" ? "its repos" : `repo ${row.repo_uid}`;
  return keyTaken("retention policy", row.repo_uid || row.group_uid, `group ${row.group_uid} already has a retention policy for ${target}`);
}

/** Inserts a policy; throws NOT_FOUND when the group does not exist, ALREADY_EXISTS when the group has one for the target. */
export async function insertRetentionPolicy(db: Db, row: Insertable<RetentionPolicyTable>): Promise<RetentionPolicyRow> {
  await getGroup(db, row.group_uid);
  await unlessTaken(() => db.insertInto("retention_policies").values(row).execute(), () => taken(row));
  return getRetentionPolicy(db, row.uid);
}

/** Writes a policy's rules; throws NOT_FOUND. */
export async function updateRetentionPolicy(
  db: Db,
  uid: string,
  change: Pick<RetentionPolicyRow, "keep_last" | "keep_tags" | "expire_after_ms" | "untagged_grace_ms" | "update_time">,
): Promise<RetentionPolicyRow> {
  return normalized(await updateByUid(db, POLICIES, uid, change));
}

/** Throws NOT_FOUND when the policy does not exist. */
export function deleteRetentionPolicy(db: Db, uid: string): Promise<void> {
  return deleteByUid(db, POLICIES, uid);
}

/**
 * The policy a repo follows (see `RetentionPolicy` in the proto): one naming the repo, the
 * nearest group's first, else the group-wide policy of the nearest group at or above the repo's
 * group; undefined when none.
 */
export async function effectiveRetentionPolicy(db: Db, repo: { uid: string; group_uid: string }): Promise<RetentionPolicyRow | undefined> {
  const groups = selfAndAncestors(repo.group_uid);
  const rows = await db
    .selectFrom("retention_policies")
    .selectAll()
    .where("group_uid", "in", groups)
    .where("repo_uid", "in", ["", repo.uid])
    .execute();
  const rank = (row: RetentionPolicyRow) => (row.repo_uid === "" ? 0 : groups.length + 1) + groups.indexOf(row.group_uid);
  const best = rows.sort((a, b) => rank(b) - rank(a))[0];
  return best && normalized(best);
}

/** The uids of repos some policy may apply to: every repo at or below a group with a policy, by uid. */
export async function reposUnderPolicies(db: Db): Promise<Array<{ uid: string; group_uid: string }>> {
  const groups = await db.selectFrom("retention_policies").select("group_uid").distinct().execute();
  if (groups.length === 0) return [];
  return db
    .selectFrom("repos")
    .select(["uid", "group_uid"])
    .where((eb) =>
      eb.or(
        groups.map(({ group_uid }) => {
          const { low, high } = subtreeRange(group_uid);
          return eb.and([eb("group_uid", ">=", low), eb("group_uid", "<", high)]);
        }),
      ),
    )
    .orderBy("uid")
    .execute();
}
