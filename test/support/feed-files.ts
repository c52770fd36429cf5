// What the advisory feed reliability tests write and look at: `modified_id.csv` files too large
// or too long to build in memory (written as streams), the temporary download folders of syncs,
// and `platform-api advisories sync` run with its peak memory reported.

import { execFile } from "node:child_process";
import { createWriteStream, readdirSync } from "node:fs";
import { once } from "node:events";
import { BIN, inRepo } from "./repo.js";

const RSS = inRepo("test/support/report-max-rss.mjs");

/** Writes `lines` to `path` as a stream, a batch at a time; `line(i)` is the i-th line, without its `\n`. */
export async function writeLines(path: string, lines: number, line: (i: number) => string): Promise<void> {
  const out = createWriteStream(path);
  let batch = "";
  for (let i = 0; i < lines; i++) {
    batch += `${line(i)}\n`;
    if (batch.length >= 1 << 20) {
      if (!out.write(batch)) await once(out, "drain");
      batch = "";
    }
  }
  out.end(batch);
  await once(out, "finish");
}

/** Writes one line of `bytes` bytes (a time, a comma and an id that never ends) and its `\n`. */
export async function writeLongLine(path: string, bytes: number): Promise<void> {
  const out = createWriteStream(path);
  const chunk = Buffer.alloc(1 << 20, 0x41);
  out.write("2030-01-01T00:00:00Z,RUSTSEC-");
  for (let left = bytes; left > 0; left -= chunk.length) {
    if (!out.write(left >= chunk.length ? chunk : chunk.subarray(0, left))) await once(out, "drain");
  }
  out.end("\n");
  await once(out, "finish");
}

/** An RFC 3339 time (to the second) `seconds` before `from`. */
export function secondsBefore(from: string, seconds: number): string {
  return new Date(Date.parse(from) - seconds * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** The download folders of feed syncs in the temporary folder `tmp`. */
export function feedDownloads(tmp: string): string[] {
  return readdirSync(tmp).filter((name) => name.startsWith("platform-api-feed-"));
}

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  /** The process's peak resident set size, MiB. */
  rssMiB: number;
  ms: number;
}

/** `platform-api advisories sync <args>` with `TMPDIR` set to `tmp`, to its end (any exit status). */
export function advisoriesSync(tmp: string, args: string[]): Promise<CliRun> {
  const started = Date.now();
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--import", RSS, BIN, "advisories", "sync", ...args],
      { encoding: "utf8", timeout: 120_000, maxBuffer: 16 << 20, env: { ...process.env, TMPDIR: tmp, DATABASE_URL: "", ADVISORY_FEEDS: "", METRICS_PORT: "0" } },
      (error, stdout, stderr) => {
        const rss = /max-rss-kib (\d+)/.exec(stderr);
        resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr, rssMiB: rss ? Number(rss[1]) / 1024 : NaN, ms: Date.now() - started });
      },
    );
  });
}
