import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The advisory figures' data, the same in every process: the real RustSec records shipped next to
 * the repo (read in place, never copied), and the records the platform server derives from them
 * to fill its store with ADVISORY_COUNT advisories, and the ListAdvisories filter.
 */

/** The RustSec feed: `../shared/data/osv/rustsec/crates` from the repo root, one record per file; BENCH_OSV_DIR overrides. */
export const OSV_DIR = process.env.BENCH_OSV_DIR ?? fileURLToPath(new URL("../../../shared/data/osv/rustsec/crates", import.meta.url));

/** Advisories the platform server's store holds (BENCH_ADVISORIES, default 100,000). */
export const ADVISORY_COUNT = Number(process.env.BENCH_ADVISORIES ?? 100_000);

/**
 * The ListAdvisories figure's `artifact_names`: the three crates with the most RustSec
 * advisories (42, 25 and 10 of them). The first copy of the feed keeps the real names, so the
 * filter matches those 77 advisories among ADVISORY_COUNT.
 */
export const FILTER_NAMES = ["wasmtime", "openssl-src", "openssl"];

/** The `.json` files of the feed, in name order. */
export function feedFiles(dir = OSV_DIR): string[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith(".json"))
    .sort()
    .map((name) => join(dir, name));
}

type Json = Record<string, unknown>;

/** One derived record: its JSON bytes, how many advisories (affected packages) it makes, and how many of them the filter matches. */
export interface DerivedRecord {
  source: string;
  bytes: Buffer;
  advisories: number;
  matching: number;
}

/** The distinct (ecosystem, name) pairs of a record's `affected[]`: its advisories. */
function packagesOf(record: Json): Array<{ ecosystem: string; name: string }> {
  const seen = new Map<string, { ecosystem: string; name: string }>();
  for (const entry of (record.affected ?? []) as Json[]) {
    const pkg = entry.package as { ecosystem: string; name: string } | undefined;
    if (pkg) seen.set(`${pkg.ecosystem}\0${pkg.name}`, pkg);
  }
  return [...seen.values()];
}

/**
 * Copy `copy` of a record: copy 0 is the record itself; copy n > 0 has `-x<n>` appended to its
 * id, its aliases and related ids, and each affected package's name and purl, so every copy is
 * a distinct record with distinct names and distinct advisories.
 */
function derive(record: Json, copy: number): Json {
  if (copy === 0) return record;
  const suffix = (text: string) => `${text}-x${copy}`;
  const ids = (list: unknown) => (Array.isArray(list) ? (list as string[]).map(suffix) : list);
  return {
    ...record,
    id: suffix(record.id as string),
    aliases: ids(record.aliases),
    related: ids(record.related),
    affected: ((record.affected ?? []) as Json[]).map((entry) => {
      const pkg = entry.package as Json | undefined;
      if (!pkg) return entry;
      return { ...entry, package: { ...pkg, name: suffix(pkg.name as string), ...(pkg.purl ? { purl: suffix(pkg.purl as string) } : {}) } };
    }),
  };
}

/**
 * Records derived from the feed's until they make `advisories` advisories, one copy of the feed
 * at a time: the feed's records in file order, then copy 1 of each, copy 2, and so on (see
 * `derive`). Each is serialized anew, so a consumer parses JSON bytes as it would a file's.
 * Memory holds the feed's parsed records and one copy's bytes (a few MB each).
 */
export function* derivedCopies(advisories = ADVISORY_COUNT, dir = OSV_DIR): Generator<DerivedRecord[]> {
  const originals = feedFiles(dir).map((file) => JSON.parse(readFileSync(file, "utf8")) as Json);
  let made = 0;
  for (let copy = 0; made < advisories; copy++) {
    const batch: DerivedRecord[] = [];
    for (const original of originals) {
      if (made >= advisories) break;
      const record = derive(original, copy);
      const packages = packagesOf(record);
      const matching = copy === 0 && !record.withdrawn ? packages.filter((p) => FILTER_NAMES.includes(p.name)).length : 0;
      made += packages.length;
      batch.push({ source: `${record.id as string}.json`, bytes: Buffer.from(JSON.stringify(record)), advisories: packages.length, matching });
    }
    if (batch.every((r) => r.advisories === 0)) throw new Error(`the records in ${dir} name no affected package`);
    yield batch;
  }
}
