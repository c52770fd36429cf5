import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readOsvFeed } from "../src/engines/advisories/osv/feed.js";
import { importOsvFeed, type ImportCounts } from "../src/domains/vulnerabilities/osv-import.js";
import { openStore } from "../src/server/open-store.js";
import { cpuMicros, type TimedPass } from "./servers/messages.js";
import { feedFiles } from "./servers/osv-feed.js";

/**
 * The import figure, run in the bench process before any server starts: `advisories import` of a
 * folder of OSV record files (`readOsvFeed` and `importOsvFeed`, as the command runs them, into a
 * fresh SQLite store in WAL mode as `serve` opens it), next to a baseline that only reads each of
 * the same files with `fs.promises.readFile` and `JSON.parse`s it, one after the other. Opening
 * and migrating the store is not timed.
 */

export interface ImportFigures {
  /** Files in the folder: each pass reads all of them. */
  files: number;
  import: TimedPass;
  parse: TimedPass;
  /** Context: `readFileSync` and `JSON.parse`, what the files cost with no asynchronous I/O at all. */
  syncParse: TimedPass;
}

type Passes<K extends string> = Record<K, () => Promise<TimedPass>>;

/**
 * Runs the passes (each times itself) in turn, one pass of each after the other, until each has
 * had `durationMs` timed (at least one pass each): so that other work on the machine falls on all
 * of them alike. Returns each one's total.
 */
async function interleave<K extends string>(durationMs: number, passes: Passes<K>): Promise<Record<K, TimedPass>> {
  const names = Object.keys(passes) as K[];
  const totals = Object.fromEntries(names.map((name) => [name, { records: 0, ms: 0, cpuUs: 0 }])) as Record<K, TimedPass>;
  do {
    for (const name of names) {
      if (totals[name].ms > 0 && totals[name].ms >= durationMs) continue;
      const one = await passes[name]();
      totals[name].records += one.records;
      totals[name].ms += one.ms;
      totals[name].cpuUs += one.cpuUs;
    }
  } while (names.some((name) => totals[name].ms < durationMs));
  return totals;
}

async function timedPass(run: () => Promise<number>): Promise<TimedPass> {
  const start = performance.now();
  const cpu = cpuMicros();
  const records = await run();
  return { records, ms: performance.now() - start, cpuUs: cpuMicros() - cpu };
}

/** The baseline: list the folder, then `readFile` and `JSON.parse` each record file in turn. */
const parsePass = (dir: string) =>
  timedPass(async () => {
    const files = feedFiles(dir);
    for (const file of files) JSON.parse(await readFile(file, "utf8"));
    return files.length;
  });

const syncParsePass = (dir: string) =>
  timedPass(async () => {
    const files = feedFiles(dir);
    for (const file of files) JSON.parse(readFileSync(file, "utf8"));
    return files.length;
  });

/** One import of the folder into a fresh store; throws unless every file was added. */
async function importPass(dir: string, files: number): Promise<TimedPass> {
  const folder = mkdtempSync(join(tmpdir(), "platform-bench-import-"));
  try {
    const store = await openStore(join(folder, "import.db"));
    try {
      let counts: ImportCounts | undefined;
      const pass = await timedPass(async () => {
        counts = await importOsvFeed(store.db, readOsvFeed([dir]));
        return counts.read;
      });
      if (!counts || counts.added !== files || counts.rejected !== 0) throw new Error(`importing ${dir}: expected ${files} new records, got ${JSON.stringify(counts)}`);
      return pass;
    } finally {
      await store.close();
    }
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

const rate = (pass: TimedPass) => pass.records / pass.ms;
const faster = (a: TimedPass | undefined, b: TimedPass) => (a && rate(a) >= rate(b) ? a : b);

/**
 * Discarded passes of each for `prewarmMs`, then `rounds` rounds, each timing every figure for
 * `durationMs`, their passes interleaved; each figure keeps its best round.
 */
export async function measureImport(dir: string, options: { prewarmMs: number; durationMs: number; rounds: number }): Promise<ImportFigures> {
  const files = feedFiles(dir).length;
  if (files === 0) throw new Error(`no .json files in ${dir}`);
  const passes: Passes<"parse" | "import" | "syncParse"> = {
    parse: () => parsePass(dir),
    import: () => importPass(dir, files),
    syncParse: () => syncParsePass(dir),
  };
  if (options.prewarmMs > 0) await interleave(options.prewarmMs, passes);
  let best: Partial<Omit<ImportFigures, "files">> = {};
  for (let round = 1; round <= options.rounds; round++) {
    process.stderr.write(`  import round ${round} of ${options.rounds}: `);
    const { parse, import: imported, syncParse } = await interleave(options.durationMs, passes);
    process.stderr.write(
      `read + JSON.parse ${Math.round(rate(parse) * 1000)} records/s, import ${Math.round(rate(imported) * 1000)} records/s, ` +
        `readFileSync + JSON.parse ${Math.round(rate(syncParse) * 1000)} records/s\n`,
    );
    best = { parse: faster(best.parse, parse), import: faster(best.import, imported), syncParse: faster(best.syncParse, syncParse) };
  }
  return { files, import: best.import!, parse: best.parse!, syncParse: best.syncParse! };
}
