import type { Selectable } from "kysely";
import { selfAndAncestors } from "../../../../aip/uidp.js";
import type { Db } from "../../../kit/schema.js";
import { getGroup } from "../../../iam/index.js";
import type { TrustPolicyTable } from "../tables.js";
import { smallTableWritten, snapshotOf } from "../../store/small-tables.js";

export type TrustPolicyRow = Selectable<TrustPolicyTable>;
export type TrustMode = "off" | "warn" | "enforce";

function normalized(row: TrustPolicyRow): TrustPolicyRow {
  return { ...row, update_time: Number(row.update_time) };
}

/** The patterns a `trust_policies.exempt_repos` column holds. */
export function exemptReposOf(row: Pick<TrustPolicyRow, "exempt_repos">): string[] {
  return JSON.parse(row.exempt_repos) as string[];
}

/** The policy set at group `group`, or undefined when it sets none; throws NOT_FOUND when the group does not exist. */
export async function findTrustPolicy(db: Db, group: string): Promise<TrustPolicyRow | undefined> {
  await getGroup(db, group);
  const row = await db.selectFrom("trust_policies").selectAll().where("group_uid", "=", group).executeTakeFirst();
  return row && normalized(row);
}

/** Sets the policy of group `group` (which exists: `findTrustPolicy` read it) and returns it. */
export async function writeTrustPolicy(db: Db, row: TrustPolicyRow): Promise<TrustPolicyRow> {
  smallTableWritten();
  await db
    .insertInto("trust_policies")
    .values(row)
    .onConflict((oc) => oc.column("group_uid").doUpdateSet({ mode: row.mode, exempt_repos: row.exempt_repos, update_time: row.update_time }))
    .execute();
  return row;
}

/** The policy a repo of group `group` follows: that of the nearest group at or above it that set one; undefined when none did. */
export async function effectiveTrustPolicy(db: Db, group: string): Promise<TrustPolicyRow | undefined> {
  const every = await snapshotOf(db, "trust_policies", () => db.selectFrom("trust_policies").selectAll().execute());
  if (every.length === 0) return undefined;
  const groups = selfAndAncestors(group);
  const rows = every.filter((row) => groups.includes(row.group_uid));
  const nearest = rows.sort((a, b) => groups.indexOf(b.group_uid) - groups.indexOf(a.group_uid))[0];
  return nearest && normalized(nearest);
}
