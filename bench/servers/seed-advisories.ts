import type { Kysely } from "kysely";
import { OsvRecordError } from "../../src/engines/advisories/osv/errors.js";
import type { FeedEntry } from "../../src/engines/advisories/osv/feed.js";
import { parseOsvDocument } from "../../src/engines/advisories/osv/parse.js";
import { importOsvFeed, type ImportCounts } from "../../src/domains/vulnerabilities/osv-import.js";
import type { Database } from "../../src/domains/kit/schema.js";
import { cpuMicros, type TimedPass } from "./messages.js";
import { ADVISORY_COUNT, derivedCopies, FILTER_NAMES, type DerivedRecord } from "./osv-feed.js";

/** `derivedCopies`, with the time (wall and CPU) spent deriving added to `spent`. */
function* timedCopies(spent: { ms: number; cpuUs: number }): Generator<DerivedRecord[]> {
  const copies = derivedCopies();
  for (;;) {
    const start = performance.now();
    const cpu = cpuMicros();
    const next = copies.next();
    spent.ms += performance.now() - start;
    spent.cpuUs += cpuMicros() - cpu;
    if (next.done) return;
    yield next.value;
  }
}

/** Times `run` over the derived feed (wall and CPU), less the time spent deriving it. */
async function timed(run: (copies: Iterable<DerivedRecord[]>) => Promise<number>): Promise<TimedPass> {
  const deriving = { ms: 0, cpuUs: 0 };
  const start = performance.now();
  const cpu = cpuMicros();
  const records = await run(timedCopies(deriving));
  return { records, ms: performance.now() - start - deriving.ms, cpuUs: cpuMicros() - cpu - deriving.cpuUs };
}

/**
 * Fills the store with ADVISORY_COUNT advisories derived from the RustSec feed (`derivedCopies`)
 * through the importer (`importOsvFeed`, each record's bytes parsed and checked by
 * `parseOsvDocument` as the feed reader does), and times it next to a pass that only
 * `JSON.parse`s the same bytes. Deriving the records is timed in neither pass. Throws unless
 * every record was added and the store holds the advisories derived (ADVISORY_COUNT, or one or
 * two more when the last record names several packages).
 */
export async function seedAdvisories(db: Kysely<Database>) {
  const parse = await timed(async (copies) => {
    let records = 0;
    for (const batch of copies) {
      for (const { bytes } of batch) JSON.parse(bytes.toString("utf8"));
      records += batch.length;
    }
    return records;
  });
  let advisories = 0;
  let matching = 0;
  async function* entries(copies: Iterable<DerivedRecord[]>): AsyncGenerator<FeedEntry> {
    for (const batch of copies) {
      for (const record of batch) {
        advisories += record.advisories;
        matching += record.matching;
        try {
          yield { source: record.source, record: parseOsvDocument(record.bytes, record.source) };
        } catch (error) {
          if (!(error instanceof OsvRecordError)) throw error;
          yield { source: record.source, error };
        }
      }
    }
  }
  let counts: ImportCounts | undefined;
  const imported = await timed(async (copies) => {
    counts = await importOsvFeed(db, entries(copies));
    return counts.read;
  });
  if (!counts || counts.added !== parse.records || counts.rejected !== 0) {
    throw new Error(`importing ${parse.records} derived records: ${JSON.stringify(counts)}`);
  }
  const { stored } = await db.selectFrom("advisories").select((eb) => eb.fn.countAll<number>().as("stored")).executeTakeFirstOrThrow();
  if (Number(stored) !== advisories || advisories < ADVISORY_COUNT) {
    throw new Error(`the store holds ${stored} advisories, expected ${advisories} (at least ${ADVISORY_COUNT})`);
  }
  return { advisories, names: FILTER_NAMES, matching, parse, import: imported };
}
