import { create } from "@bufbuild/protobuf";
import { DocumentAdvisorySchema, DocumentSchema, type Document } from "../../../gen/platform/advisory/v2/document_pb.js";
import { ReferenceSchema, VulnerabilityMetadataSchema, type VulnerabilityMetadata } from "../../../gen/platform/advisory/v2/vulnerability_metadata_pb.js";
import type { OsvAffected, OsvRecord } from "../../engines/advisories/osv/record.js";
import { osvTimeMillis } from "../../engines/advisories/osv/time.js";
import { toTimestamp } from "../../aip/time.js";
import { eventViews, severityViews } from "../vulnerabilities/index.js";
import type { AdvisoryRow } from "../vulnerabilities/index.js";
import type { DocumentRow, OsvRecordRow } from "../vulnerabilities/index.js";

/** Reference.Type values: the OSV reference types, in the hosted enum's order, then GIT. */
const REFERENCE_TYPES = ["ADVISORY", "ARTICLE", "DETECTION", "DISCUSSION", "REPORT", "FIX", "INTRODUCED", "PACKAGE", "EVIDENCE", "WEB", "GIT"];

function documentAdvisory(row: AdvisoryRow) {
  const timestamp = toTimestamp(Number(row.update_time));
  return create(DocumentAdvisorySchema, {
    id: row.advisory_id,
    events: eventViews(JSON.parse(row.affected) as OsvAffected[]).map((e) => ({ ...e, timestamp })),
    aliases: JSON.parse(row.aliases) as string[],
    packageNamespace: row.ecosystem,
    summary: row.summary,
    withdrawn: row.withdrawn_time === null ? undefined : toTimestamp(Number(row.withdrawn_time)),
  });
}

export function documentFromRow(row: DocumentRow): Document {
  return create(DocumentSchema, { id: row.uid, advisories: row.advisories.map(documentAdvisory) });
}

export function metadataFromRow(row: OsvRecordRow): VulnerabilityMetadata {
  const record = JSON.parse(row.document) as OsvRecord;
  return create(VulnerabilityMetadataSchema, {
    id: record.id,
    summary: record.summary ?? "",
    details: record.details ?? "",
    references: (record.references ?? []).map((r) => create(ReferenceSchema, { type: REFERENCE_TYPES.indexOf(r.type) + 1, url: r.url })),
    severities: severityViews(record.severity ?? []),
    aliases: [...new Set(record.aliases ?? [])],
    published: record.published === undefined ? undefined : toTimestamp(osvTimeMillis(record.published)),
    modified: toTimestamp(Number(row.modified_time)),
    withdrawn: row.withdrawn_time === null ? undefined : toTimestamp(Number(row.withdrawn_time)),
  });
}
