import { create } from "@bufbuild/protobuf";
import { TermsAcceptanceSchema, type TermsAcceptance } from "../../../gen/platform/iam/v2/terms_pb.js";
import { toTimestamp } from "../../aip/time.js";
import { rootOf } from "../../aip/uidp.js";
import type { TermsAcceptanceRow } from "./store/terms.js";

export function termsAcceptanceFromRow(row: TermsAcceptanceRow): TermsAcceptance {
  return create(TermsAcceptanceSchema, {
    uid: row.uid,
    docId: row.doc_id,
    acceptedBy: row.accepted_by,
    groupUid: row.group_uid,
    orgUid: rootOf(row.group_uid),
    createTime: toTimestamp(row.create_time),
    updateTime: toTimestamp(row.update_time),
  });
}
