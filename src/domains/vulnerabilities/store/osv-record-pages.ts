import type { Selectable } from "kysely";
import type { Page } from "../../../aip/pagination.js";
import { applyPage, countRows } from "../../kit/list-query.js";
import type { Db } from "../../kit/schema.js";
import type { OsvRecordTable } from "../tables.js";
import { nonEmpty, recordsNamed } from "./advisories.js";

export type OsvRecordRow = Selectable<OsvRecordTable>;

/** Sortable metadata fields: the record id (`uid` holds it) and `modified`. */
export const metadataOrderable = { id: "uid", modified: "modified_time" };

function filtered(db: Db, recordNames: string[][]) {
  return db.selectFrom("osv_records").where((eb) => eb.and(nonEmpty(recordNames).map((names) => eb("osv_records.uid", "in", recordsNamed(db, names)))));
}

/** One page of OSV records (withdrawn ones included) found by one name (id or alias) of each list, and the count of all. */
export async function listRecords(db: Db, recordNames: string[][], page: Page): Promise<{ rows: OsvRecordRow[]; total: number }> {
  const rows = await applyPage(filtered(db, recordNames).selectAll(), page, "osv_records").execute();
  const total = await countRows(filtered(db, recordNames), page.total);
  return { rows, total };
}
