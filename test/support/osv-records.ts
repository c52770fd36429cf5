import type { FeedEntry } from "../../src/engines/advisories/osv/feed.js";
import { OsvRecordError } from "../../src/engines/advisories/osv/errors.js";
import { parseOsvRecord } from "../../src/engines/advisories/osv/parse.js";
import type { OsvRecord } from "../../src/engines/advisories/osv/record.js";
import { inRepo } from "./repo.js";

/** The RustSec records shipped beside the repository (`../shared/data`, as CI clones it). */
export const RUSTSEC_DIR = inRepo("../shared/data/osv/rustsec");

/** A small crates.io record: `name` affected from `introduced` up to `fixed`. */
export function osvRecord(id: string, options: Partial<OsvRecord> & { name?: string; introduced?: string; fixed?: string } = {}): OsvRecord {
  const { name = "demo", introduced = "0.0.0-0", fixed = "1.0.0", ...rest } = options;
  return parseOsvRecord(
    {
      id,
      modified: "2024-01-01T00:00:00Z",
      published: "2023-06-01T00:00:00Z",
      summary: `${id} summary`,
      details: `${id} details`,
      affected: [{ package: { ecosystem: "crates.io", name }, ranges: [{ type: "SEMVER", events: [{ introduced }, { fixed }] }] }],
      references: [{ type: "ADVISORY", url: `https://example.com/${id}` }],
      ...rest,
    },
    `${id}.json`,
  );
}

/** Feed entries as readOsvFeed yields them. */
export async function* feedOf(...items: Array<OsvRecord | OsvRecordError>): AsyncGenerator<FeedEntry> {
  for (const item of items) {
    yield item instanceof OsvRecordError ? { source: item.source, error: item } : { source: `${item.id}.json`, record: item };
  }
}

export const refused = (source: string) => new OsvRecordError(source, "affected[0].package.ecosystem", "not an OSV ecosystem", "invalid");
