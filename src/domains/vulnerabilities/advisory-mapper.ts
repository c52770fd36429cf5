import { create } from "@bufbuild/protobuf";
import { AdvisorySchema, type Advisory } from "../../../gen/platform/vulnerabilities/v2/advisory_pb.js";
import type { OsvAffected, OsvSeverity } from "../../engines/advisories/osv/record.js";
import { toTimestamp } from "../../aip/time.js";
import { eventViews, listedVersions, severityViews } from "./osv-view.js";
import type { AdvisoryRow } from "./store/advisories.js";

export function advisoryFromRow(row: AdvisoryRow): Advisory {
  const entries = JSON.parse(row.affected) as OsvAffected[];
  return create(AdvisorySchema, {
    uid: row.uid,
    advisoryId: row.advisory_id,
    createTime: toTimestamp(Number(row.create_time)),
    updateTime: toTimestamp(Number(row.update_time)),
    artifactName: row.artifact_name,
    aliases: JSON.parse(row.aliases) as string[],
    events: eventViews(entries),
    severities: severityViews(JSON.parse(row.severity) as OsvSeverity[]),
    ecosystem: row.ecosystem,
    versions: listedVersions(entries),
    summary: row.summary,
  });
}
