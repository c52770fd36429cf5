import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { writeLargeLayout } from "../test/support/oci-layout.js";

/**
 * `registry import` of a generated OCI layout (`npm run bench:import-memory`): its peak resident
 * memory and wall time, next to a baseline of the same process doing nothing but `--help`.
 * BENCH_IMPORT_MB (default 382) is the size of the layout's blobs, in 4 layers; BENCH_BIN runs
 * another build of the command (e.g. an older checkout's bin/platform-api.js).
 */
const MB = Number(process.env.BENCH_IMPORT_MB ?? 382);
const BIN = process.env.BENCH_BIN ?? new URL("../bin/platform-api.js", import.meta.url).pathname;
const RSS = new URL("../test/support/report-max-rss.mjs", import.meta.url).pathname;
const run = promisify(execFile);

const dir = mkdtempSync(join(tmpdir(), "platform-api-bench-import-"));
try {
  const layer = Math.floor((MB * 1024 * 1024) / 4);
  const layout = await writeLargeLayout(join(dir, "layout"), { layerBytes: [layer, layer, layer, layer], ref: "v1" });
  const db = join(dir, "platform.db");
  const env = { ...process.env, DATABASE_URL: "", REGISTRY_DIR: "", API_URL: "" };
  const cli = async (...args: string[]) => {
    const started = performance.now();
    const { stderr } = await run(process.execPath, ["--import", RSS, BIN, ...args], { env, encoding: "utf8", maxBuffer: 1 << 20 });
    return { ms: performance.now() - started, rssMiB: Number(/max-rss-kib (\d+)/.exec(stderr)![1]) / 1024 };
  };
  await cli("bootstrap", "--org", "acme", "--db", db);
  const idle = await cli("--help");
  const imported = await cli("registry", "import", "--db", db, "--registry-dir", join(dir, "registry"), "--repo", "acme/big", layout.dir);
  console.log(`layout: ${(layout.blobBytes / 1024 / 1024).toFixed(0)} MiB of blobs in 4 layers; command: ${BIN}`);
  console.log(`platform-api --help (baseline): peak RSS ${idle.rssMiB.toFixed(0)} MiB`);
  console.log(`registry import: peak RSS ${imported.rssMiB.toFixed(0)} MiB, ${(imported.ms / 1000).toFixed(1)} s`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
