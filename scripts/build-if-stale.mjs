// Compiles src/ and gen/ into dist/, and the console into dist/console (`npm run build`), when a
// source is newer than the last build, so what bin/platform-api.js runs (and the console it serves)
// is never older than the sources the tests read.
import { spawnSync } from "node:child_process";
import { readdirSync, statSync, utimesSync } from "node:fs";
import { join } from "node:path";

const STAMP = "dist/.tsbuildinfo";
const SOURCES = ["src", "gen", "console", "tsconfig.json", "tsconfig.build.json"];

function newest(path) {
  const info = statSync(path, { throwIfNoEntry: false });
  if (!info) return 0;
  if (!info.isDirectory()) return info.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((name) => newest(join(path, name))));
}

/** Builds when dist/ is missing or older than a source; exits the process on a failed build. */
export function buildIfStale() {
  const built = statSync(STAMP, { throwIfNoEntry: false })?.mtimeMs ?? 0;
  if (built >= Math.max(...SOURCES.map(newest))) return;
  process.stderr.write("dist/ is older than the sources: npm run build\n");
  for (const args of [["node_modules/typescript/bin/tsc", "-p", "tsconfig.build.json"], ["node_modules/vite/bin/vite.js", "build", "--config", "console/vite.config.ts"]]) {
    const result = spawnSync(process.execPath, args, { stdio: "inherit" });
    if (result.status !== 0) process.exit(result.status ?? 1);
  }
  // An incremental build with nothing to emit leaves the stamp as it was.
  const now = new Date();
  utimesSync(STAMP, now, now);
}

if (import.meta.url === `file://${process.argv[1]}`) buildIfStale();
