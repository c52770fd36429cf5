// Early flushes of uploads: they never fail an upload, and the publisher waits for them.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { createWriteback, WRITEBACK_BYTES } from "../../src/domains/registry/content/writeback.js";

const dir = mkdtempSync(join(tmpdir(), "writeback-"));
test.after(() => rmSync(dir, { recursive: true, force: true }));

test("settle waits for the flush an append's end started, then nothing is left running", async () => {
  const writeback = createWriteback();
  const path = join(dir, "upload");
  writeFileSync(path, Buffer.alloc(1024));
  const flushes = writeback.during(path);
  flushes.advance(WRITEBACK_BYTES);
  flushes.end(true);
  let settled = false;
  const settling = writeback.settle(path).then(() => (settled = true));
  assert.equal(settled, false, "a flush is running");
  await settling;
  assert.equal(settled, true);
  await writeback.settle(path); // nothing left: resolves at once
});

test("a flush of a file that is gone is ignored: the upload's own outcome stands", async () => {
  const writeback = createWriteback();
  const path = join(dir, "never-written");
  const flushes = writeback.during(path);
  flushes.advance(WRITEBACK_BYTES * 2);
  flushes.end(true);
  await writeback.settle(path);
});
