// modified_id.csv read with bounds: lines split however the file's chunks fall, a line over its
// byte bound refused with its number, the line count bounded down to the cursor (the stop line
// and empty lines counted as documented), malformed lines named.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { LineTooLongError, readBoundedLines } from "../../src/engines/advisories/osv/bounded-lines.js";
import { OsvFeedError } from "../../src/engines/advisories/osv/errors.js";
import { readModifiedIds, type ModifiedIdsLimits } from "../../src/engines/advisories/osv/modified-ids.js";

const dir = mkdtempSync(join(tmpdir(), "platform-api-modified-ids-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

function fileOf(content: string | Buffer): string {
  const path = join(dir, `${files++}.csv`);
  writeFileSync(path, content);
  return path;
}

async function lines(content: string | Buffer, maxLineBytes: number): Promise<string[]> {
  const out: string[] = [];
  for await (const chunk of readBoundedLines(fileOf(content), maxLineBytes)) out.push(...chunk.map((l) => l.text));
  return out;
}

async function ids(content: string, after?: string, limits: ModifiedIdsLimits = { maxLineBytes: 1024, maxLines: 10 }): Promise<string[]> {
  const out: string[] = [];
  for await (const chunk of readModifiedIds(fileOf(content), "feed/modified_id.csv", after, limits)) out.push(...chunk.map((l) => l.id));
  return out;
}

test("lines: ends, a last line without one, CR LF, empty lines, UTF-8 across chunks", async () => {
  const wide = `${"é".repeat(40_000)}`;
  for (const [content, expected] of [
    ["", []],
    ["a\nb\n", ["a", "b"]],
    ["a\r\nb", ["a", "b"]],
    ["\n\n", ["", ""]],
    ["x".repeat(100), ["x".repeat(100)]],
    // 80,000 bytes: the line spans two chunks of 64 KiB, and a two-byte character may too.
    [`${wide}\n${wide}`, [wide, wide]],
  ] as const) {
    assert.deepEqual(await lines(content, 100_000), expected, JSON.stringify(content).slice(0, 40));
  }
});

test("lines: one over the bound is refused with its number, wherever it falls", async () => {
  assert.deepEqual(await lines(`${"x".repeat(100)}\n`, 100), ["x".repeat(100)]);
  for (const [content, number] of [
    [`${"x".repeat(101)}\n`, 1],
    [`a\nb\n${"x".repeat(101)}`, 3],
    [`a\n${"x".repeat(200_000)}\nb\n`, 2],
    [Buffer.alloc(300_000, 0x41), 1],
  ] as const) {
    await assert.rejects(lines(content, 100), (error: unknown) => error instanceof LineTooLongError && error.number === number && error.maxLineBytes === 100);
  }
});

test("the index: newest first down to the cursor, within the line count", async () => {
  const index = ["2024-03-03T00:00:00Z,C-3", "", "2024-02-02T00:00:00Z,B-2", "2024-01-01T00:00:00Z,A-1"].join("\n");
  assert.deepEqual(await ids(index), ["C-3", "B-2", "A-1"]);
  assert.deepEqual(await ids(index, "2024-02-02T00:00:00Z"), ["C-3"]);
  assert.deepEqual(await ids(index, "2024-02-02T00:00:00+01:00"), ["C-3", "B-2"]);
  // Three lines before the stop (the empty one counts): at the bound, not over it.
  assert.deepEqual(await ids(index, "2024-01-01T00:00:00Z", { maxLineBytes: 1024, maxLines: 3 }), ["C-3", "B-2"]);
  await assert.rejects(ids(index, "2024-01-01T00:00:00Z", { maxLineBytes: 1024, maxLines: 2 }), {
    name: "OsvFeedError",
    message: "feed/modified_id.csv: more than 2 lines newer than 2024-01-01T00:00:00Z (at most 2 are read in one sync)",
  });
  await assert.rejects(ids(index, undefined, { maxLineBytes: 1024, maxLines: 3 }), { message: "feed/modified_id.csv: more than 3 lines (at most 3 are read in one sync)" });
});

test("the index: a line too long, malformed or naming an unsafe id is named", async () => {
  for (const [content, message] of [
    [`2024-01-01T00:00:00Z,A-1\n2024-01-01T00:00:00Z,${"A".repeat(2000)}\n`, "feed/modified_id.csv:2: the line is longer than 1024 bytes (the limit of one line)"],
    ["2024-01-01T00:00:00Z A-1\n", "feed/modified_id.csv:1: not a `<RFC 3339 modified>,<id>` line"],
    ["2024-02-30T00:00:00Z,A-1\n", "feed/modified_id.csv:1: not a `<RFC 3339 modified>,<id>` line"],
    ["2024-01-01T00:00:00Z,../A-1\n", 'feed/modified_id.csv:1: "../A-1" is not an OSV id'],
  ] as const) {
    await assert.rejects(ids(content), (error: unknown) => error instanceof OsvFeedError && error.message === message, message);
  }
  await assert.rejects(ids("2024-01-01T00:00:00Z,A-1\n", "yesterday"), TypeError);
});
