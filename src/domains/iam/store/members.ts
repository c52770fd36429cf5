import type { Selectable } from "kysely";
import type { Page } from "../../../aip/pagination.js";
import { selfAndAncestors, type UidpFilter } from "../../../aip/uidp.js";
import { CACHEABLE, cachedWith } from "../../../store/cached-reads.js";
import { applyPage, countRows, listConditions, type UidColumns } from "../../kit/list-query.js";
import { CREATE_TIME_ORDERABLE } from "../../kit/resource-table.js";
import type { Db } from "../../kit/schema.js";
import type { IdentityTable } from "../tables.js";

/**
 * The members of a group: the identities with a role binding on the group or on a group above it
 * (a binding applies at its group and every group below), read from `identities`, `role_bindings`,
 * `groups`, `roles` and `identity_providers`.
 */

/** One role binding of a member that applies at the listed group. */
export interface MemberBindingRow {
  uid: string;
  group_uid: string;
  group_name: string;
  group_description: string;
  role_uid: string;
  role_name: string;
  role_description: string;
  create_time: number;
  /** Made on a group above the listed one. */
  inherited: boolean;
}

/** A member: its identity's columns (never a pull token's password hash) and its bindings that apply. */
export interface MemberRow
  extends Pick<Selectable<IdentityTable>, "uid" | "group_uid" | "name" | "description" | "claim_match" | "static_keys" | "pull_token_expire_time" | "last_seen_time" | "create_time"> {
  /** The uids of the identity providers of the identity's group (a person of one has a uid derived from it). */
  group_providers: string[];
  /** Ordered by group uid (the organization first), then role uid. */
  bindings: MemberBindingRow[];
}

/** Sortable member fields: API name to identity column. */
export const memberOrderable = {
  name: "name",
  ...CREATE_TIME_ORDERABLE,
};

export interface MemberFilter {
  /** The listed group's uid. */
  group: string;
  /** Narrows by the identities' uids. */
  uidp: UidpFilter;
}

const IDENTITY_COLUMNS: UidColumns = { uid: "identities.uid", parent: "identities.group_uid", ownerSegments: 1 };

const MEMBER_COLUMNS = [
  "identities.uid",
  "identities.group_uid",
  "identities.name",
  "identities.description",
  "identities.claim_match",
  "identities.static_keys",
  "identities.pull_token_expire_time",
  "identities.last_seen_time",
  "identities.create_time",
] as const;

/** The identities bound on `group` or above it that `uidp` admits, nothing selected yet. */
function membersQuery(db: Db, { group, uidp }: MemberFilter) {
  const applying = selfAndAncestors(group);
  return db.selectFrom("identities").where((eb) =>
    eb.and([
      eb("identities.uid", "in", eb.selectFrom("role_bindings").select("role_bindings.identity_uid").where("role_bindings.group_uid", "in", applying)),
      ...listConditions(eb, IDENTITY_COLUMNS, uidp, undefined),
    ]),
  );
}

/**
 * One page of members (up to `limit + 1`, in `page.order` over the identities' columns), each with
 * its bindings that apply at `filter.group`, and the count of all members the filter admits. The
 * group is not checked to exist.
 */
export async function listMembers(db: Db, filter: MemberFilter, page: Page): Promise<{ rows: MemberRow[]; total: number }> {
  const query = membersQuery(db, filter);
  // On SQLite, the page, its bindings and the count are cached until the database changes (CACHEABLE), as every listing's are.
  const identities = await applyPage(query.select(MEMBER_COLUMNS), page, "identities").modifyEnd(CACHEABLE).execute();
  const total = await countRows(query, page.total);
  if (identities.length === 0) return { rows: cachedWith([], identities), total };
  const uids = identities.map((i) => i.uid);
  const bindings = await db
    .selectFrom("role_bindings")
    .innerJoin("groups", "groups.uid", "role_bindings.group_uid")
    .innerJoin("roles", "roles.uid", "role_bindings.role_uid")
    .select([
      "role_bindings.uid",
      "role_bindings.identity_uid",
      "role_bindings.group_uid",
      "groups.name as group_name",
      "groups.description as group_description",
      "role_bindings.role_uid",
      "roles.name as role_name",
      "roles.description as role_description",
      "role_bindings.create_time",
    ])
    .where("role_bindings.identity_uid", "in", uids)
    .where("role_bindings.group_uid", "in", selfAndAncestors(filter.group))
    .orderBy("role_bindings.group_uid")
    .orderBy("role_bindings.role_uid")
    .modifyEnd(CACHEABLE)
    .execute();
  const claimed = [...new Set(identities.filter((i) => i.claim_match !== "").map((i) => i.group_uid))].filter((g) => g !== "");
  const providers =
    claimed.length === 0
      ? []
      : await db.selectFrom("identity_providers").select(["uid", "group_uid"]).where("group_uid", "in", claimed).orderBy("uid").modifyEnd(CACHEABLE).execute();
  const rows = identities.map(
    (identity): MemberRow => ({
      ...identity,
      group_providers: providers.filter((p) => p.group_uid === identity.group_uid).map((p) => p.uid),
      bindings: bindings
        .filter((b) => b.identity_uid === identity.uid)
        .map(({ identity_uid: _, ...b }) => ({ ...b, inherited: b.group_uid !== filter.group })),
    }),
  );
  return { rows: cachedWith(rows, identities), total };
}
