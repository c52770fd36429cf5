import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { after, test } from "node:test";
import { writeFileRange } from "../../src/domains/registry/content/file-transfer.js";

/** The blob answer's copy loop: two buffers in turn, each reused only after its write was done. */

const dir = mkdtempSync(join(tmpdir(), "platform-api-transfer-"));
after(() => rmSync(dir, { recursive: true, force: true }));
const bytes = randomBytes(100_000);
const file = join(dir, "blob");
writeFileSync(file, bytes);

/** A destination that keeps copies of what it was given, finishing each write after a turn of the event loop. */
function collector(failAt?: number) {
  const chunks: Buffer[] = [];
  const out = new Writable({
    write(chunk: Buffer, _encoding, done) {
      if (failAt !== undefined && chunks.length === failAt) return setImmediate(() => done(new Error("the client went away")));
      chunks.push(Buffer.from(chunk)); // a copy: the buffer is reused once `done` is called
      setImmediate(done);
    },
  });
  out.on("error", () => {}); // as a response's socket error is handled by the server; the write's callback carries it here
  return { out, bytes: () => Buffer.concat(chunks), chunks };
}

test("the whole file and ranges arrive intact, in chunks of the given size, buffers reused in turn", async () => {
  for (const [start, end, chunk] of [[0, 99_999, 4096], [10, 20, 4096], [5000, 99_999, 7777], [99_999, 99_999, 1024], [0, 99_999, 1 << 20]]) {
    const sink = collector();
    await writeFileRange(file, start, end, sink.out, chunk);
    assert.ok(sink.bytes().equals(bytes.subarray(start, end + 1)), `${start}-${end} by ${chunk}`);
    assert.ok(sink.chunks.every((c) => c.length <= chunk));
  }
});

test("a file shorter than the range asked, and a failing destination, reject", async () => {
  await assert.rejects(writeFileRange(file, 0, 200_000, collector().out, 65_536), /ended at byte 100000/);
  await assert.rejects(writeFileRange(file, 0, 99_999, collector(3).out, 4096), /the client went away/);
  await assert.rejects(writeFileRange(join(dir, "missing"), 0, 10, collector().out, 4096), { code: "ENOENT" });
});
