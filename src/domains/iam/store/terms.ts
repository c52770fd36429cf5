import type { Selectable } from "kysely";
import type { Page } from "../../../aip/pagination.js";
import { newChildUid, selfAndAncestors } from "../../../aip/uidp.js";
import { listPage, resourceTable, TIMES_ORDERABLE } from "../../kit/resource-table.js";
import type { Db } from "../../kit/schema.js";
import type { TermsAcceptanceTable } from "../tables.js";
import { getGroup } from "./groups.js";

export type TermsAcceptanceRow = Selectable<TermsAcceptanceTable>;

/** Sortable acceptance fields: API name to column. */
export const termsAcceptanceOrderable = {
  doc_id: "doc_id",
  ...TIMES_ORDERABLE,
};

/**
 * Records that `acceptedBy` accepts each document for `groupUid`, in order;
 * a document it already accepted there keeps its first record. NOT_FOUND
 * when the group does not exist.
 */
export async function acceptTerms(db: Db, groupUid: string, docIds: string[], acceptedBy: string, time: number): Promise<TermsAcceptanceRow[]> {
  await getGroup(db, groupUid);
  const fresh = docIds.map((doc_id) => ({ uid: newChildUid(groupUid), group_uid: groupUid, doc_id, accepted_by: acceptedBy, create_time: time, update_time: time }));
  // A concurrent acceptance of the same document is no error: its row stands.
  await db
    .insertInto("terms_acceptances")
    .values(fresh)
    .onConflict((oc) => oc.columns(["group_uid", "doc_id", "accepted_by"]).doNothing())
    .execute();
  const rows = await db
    .selectFrom("terms_acceptances")
    .selectAll()
    .where("group_uid", "=", groupUid)
    .where("accepted_by", "=", acceptedBy)
    .where("doc_id", "in", docIds)
    .execute();
  const byDoc = new Map(rows.map((row) => [row.doc_id, row]));
  return docIds.map((doc) => byDoc.get(doc)!);
}

const TERMS_ACCEPTANCES = resourceTable("terms_acceptances", "terms acceptance", { parent: "group_uid", ownerSegments: 1 });

export interface TermsFilter {
  /** Acceptances made at this group or at any of its ancestors. */
  groupUid: string;
  docId?: string;
}

/** One page (up to `limit + 1` rows, in `page.order`) and the count of all matches. */
export function listTermsAcceptances(db: Db, filter: TermsFilter, page: Page): Promise<{ rows: TermsAcceptanceRow[]; total: number }> {
  const groups = selfAndAncestors(filter.groupUid);
  return listPage(db, TERMS_ACCEPTANCES, { equals: { doc_id: filter.docId }, where: (eb) => [eb("group_uid", "in", groups)] }, page);
}
