import { createHash } from "node:crypto";
import type { Insertable } from "kysely";
import type { OsvAffected, OsvRecord, OsvSeverity } from "../../engines/advisories/osv/record.js";
import { osvTimeMillis } from "../../engines/advisories/osv/time.js";
import type { AdvisoryTable, OsvNameTable, OsvRecordTable } from "./tables.js";

/**
 * An advisory's uid: 40 lowercase hex characters, the first 20 bytes of
 * sha256(advisory id NUL ecosystem NUL package name). Stable across imports and servers, and a
 * root-level UIDP (advisories belong to no group), so the uid rules and `uidp.ids` apply.
 */
export function advisoryUid(advisoryId: string, ecosystem: string, name: string): string {
  return createHash("sha256").update(`${advisoryId}\0${ecosystem}\0${name}`).digest("hex").slice(0, 40);
}

/** What one OSV record stores: its row, the names that find it, and one advisory per affected package. */
export interface RecordRows {
  record: Insertable<OsvRecordTable>;
  names: Insertable<OsvNameTable>[];
  advisories: Insertable<AdvisoryTable>[];
}

const severityKey = (s: OsvSeverity) => `${s.type}\0${s.score}`;

/** An entry as an advisory stores it: without the opaque objects no reader of an advisory uses (the document keeps them). */
function storedEntry({ database_specific: _database, ecosystem_specific: _ecosystem, ...entry }: OsvAffected): OsvAffected {
  return entry;
}

/** A digest of an advisory row's served columns (22 base64url characters): its `etag`. */
export function advisoryEtag(row: Omit<Insertable<AdvisoryTable>, "uid" | "etag">): string {
  const { advisory_id, ecosystem, artifact_name, affected, aliases, summary, severity, withdrawn_time, create_time, update_time } = row;
  return createHash("sha256")
    .update([advisory_id, ecosystem, artifact_name, affected, aliases, summary, severity, withdrawn_time, create_time, update_time].join("\0"))
    .digest("base64url")
    .slice(0, 22);
}

/**
 * The rows of a parsed record. `affected[]` entries naming the same (ecosystem, name) make one
 * advisory holding all of them; entries without a package (commits of a repository only) make
 * none. An advisory's severities are its entries' own, else the record's.
 */
export function recordRows(record: OsvRecord): RecordRows {
  const modified = osvTimeMillis(record.modified);
  const withdrawn = record.withdrawn === undefined ? null : osvTimeMillis(record.withdrawn);
  const aliases = [...new Set(record.aliases ?? [])];
  const byPackage = new Map<string, { ecosystem: string; name: string; entries: OsvAffected[] }>();
  for (const entry of record.affected ?? []) {
    if (!entry.package) continue;
    const { ecosystem, name } = entry.package;
    const key = `${ecosystem}\0${name}`;
    const group = byPackage.get(key) ?? { ecosystem, name, entries: [] };
    group.entries.push(entry);
    byPackage.set(key, group);
  }
  const advisories = [...byPackage.values()].map(({ ecosystem, name, entries }) => {
    const own = new Map(entries.flatMap((e) => e.severity ?? []).map((s) => [severityKey(s), s]));
    const severity = own.size > 0 ? [...own.values()] : (record.severity ?? []);
    const row = {
      advisory_id: record.id,
      ecosystem,
      artifact_name: name,
      affected: JSON.stringify(entries.map(storedEntry)),
      aliases: JSON.stringify(aliases),
      summary: record.summary ?? "",
      severity: JSON.stringify(severity),
      withdrawn_time: withdrawn,
      create_time: record.published === undefined ? modified : osvTimeMillis(record.published),
      update_time: modified,
    };
    return { uid: advisoryUid(record.id, ecosystem, name), ...row, etag: advisoryEtag(row) };
  });
  const names = [...new Set([record.id, ...aliases])].map((name) => ({ name, record_uid: record.id }));
  return {
    record: { uid: record.id, modified: record.modified, modified_time: modified, withdrawn_time: withdrawn, document: JSON.stringify(record) },
    names,
    advisories,
  };
}
