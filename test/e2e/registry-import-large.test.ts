import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, openSync, readFileSync, rmSync, statSync, writeSync, closeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import { openStore } from "../../src/server/open-store.js";
import { writeLargeLayout } from "../support/oci-layout.js";
import { BIN, inRepo } from "../support/repo.js";

/**
 * `registry import` of layouts far larger than a manifest, through the real command line:
 * blobs are streamed (peak memory does not grow with their size), checked against their
 * digests on the way, and the copy shows its progress on a terminal only.
 */

const run = promisify(execFile);
const RSS = inRepo("test/support/report-max-rss.mjs");
const dir = mkdtempSync(join(tmpdir(), "platform-api-import-large-"));
const db = join(dir, "platform.db");
const env = { ...process.env, DATABASE_URL: "", REGISTRY_DIR: "", API_URL: "" };
const MIB = 1024 * 1024;

/** `registry import` into repo `acme/<repo>`; stdout, stderr and the peak RSS in MiB. */
async function importLayout(layout: string, repo: string, registryDir = join(dir, "registry")) {
  const { stdout, stderr } = await run(process.execPath, ["--import", RSS, BIN, "registry", "import", "--db", db, "--registry-dir", registryDir, "--repo", `acme/${repo}`, layout], {
    env,
    encoding: "utf8",
  });
  return { result: JSON.parse(stdout) as { blobs: number; manifests: unknown[]; tags: unknown[] }, stderr, rssMiB: Number(/max-rss-kib (\d+)/.exec(stderr)![1]) / 1024 };
}

before(async () => {
  await run(process.execPath, [BIN, "bootstrap", "--org", "acme", "--db", db], { env });
});
after(() => rmSync(dir, { recursive: true, force: true }));

test("peak memory does not grow with the blobs: 128 MiB of layers cost less than half their size over a 1 KiB layout", async () => {
  const small = await writeLargeLayout(join(dir, "small"), { layerBytes: [1024], ref: "small" });
  // Held in memory whole, as imports once did, they would cost 128 MiB and more.
  const large = await writeLargeLayout(join(dir, "large"), { layerBytes: [32 * MIB, 32 * MIB, 32 * MIB, 32 * MIB], ref: "large" });
  const baseline = await importLayout(small.dir, "small");
  const measured = await importLayout(large.dir, "large");
  assert.equal(measured.result.blobs, 5, "a config and four layers");
  assert.ok(measured.rssMiB - baseline.rssMiB < 64, `peak RSS ${measured.rssMiB.toFixed(0)} MiB against ${baseline.rssMiB.toFixed(0)} MiB for the small layout`);
  // Every blob is stored whole under its digest.
  const manifest = JSON.parse(readFileSync(join(large.dir, "blobs", "sha256", large.top.digest.slice(7)), "utf8")) as { layers: Array<{ digest: string; size: number }> };
  for (const layer of manifest.layers) {
    const hex = layer.digest.slice(7);
    assert.equal(statSync(join(dir, "registry", "blobs", "sha256", hex.slice(0, 2), hex)).size, layer.size);
  }
});

test("a layer whose bytes do not match its digest stops the import with one line; nothing is recorded and the bad blob is not stored", async () => {
  const layout = await writeLargeLayout(join(dir, "corrupt"), { layerBytes: [2 * MIB], ref: "corrupt" });
  const manifest = JSON.parse(readFileSync(join(layout.dir, "blobs", "sha256", layout.top.digest.slice(7)), "utf8")) as { layers: Array<{ digest: string }> };
  const hex = manifest.layers[0].digest.slice(7);
  const fd = openSync(join(layout.dir, "blobs", "sha256", hex), "r+");
  writeSync(fd, Buffer.from("flipped"), 0, 7, MIB); // same size, other bytes
  closeSync(fd);
  const registryDir = join(dir, "corrupt-registry");
  await assert.rejects(importLayout(layout.dir, "corrupt", registryDir), (e: { code: number; stderr: string }) => {
    assert.equal(e.code, 2);
    const lines = e.stderr.split("\n").filter((l) => l !== "" && !l.startsWith("max-rss-kib"));
    assert.equal(lines.length, 1, e.stderr);
    assert.match(lines[0], new RegExp(`blob sha256:${hex} does not match its digest`));
    return true;
  });
  assert.throws(() => statSync(join(registryDir, "blobs", "sha256", hex.slice(0, 2), hex)), { code: "ENOENT" });
  const store = await openStore(db);
  try {
    assert.deepEqual(await store.db.selectFrom("repos").select("uid").where("name", "=", "corrupt").execute(), []);
    assert.deepEqual(await store.db.selectFrom("blobs").select("size").where("digest", "=", `sha256:${hex}`).execute(), []);
  } finally {
    await store.close();
  }
});

test("on a terminal the copy shows blobs and MiB done; piped, stderr stays empty", async () => {
  const layout = await writeLargeLayout(join(dir, "progress"), { layerBytes: [4 * MIB, 4 * MIB], ref: "progress" });
  const piped = await importLayout(layout.dir, "piped", join(dir, "piped-registry"));
  assert.equal(piped.stderr.replace(/max-rss-kib \d+\n/, ""), "");
  // `script` runs the command under a pseudo-terminal and copies what it writes.
  const command = [process.execPath, BIN, "registry", "import", "--db", db, "--registry-dir", join(dir, "tty-registry"), "--repo", "acme/tty", layout.dir].map((a) => `'${a}'`).join(" ");
  const { stdout } = await run("script", ["-qec", command, "/dev/null"], { env, encoding: "utf8" });
  assert.match(stdout, /\r\x1b\[Kblobs 3\/3, 8\.0 of 8\.0 MiB \([\d.]+ MiB\/s\)/);
  assert.match(stdout, /\r\x1b\[K\{"repo":/, "the line is cleared before the result");
});
