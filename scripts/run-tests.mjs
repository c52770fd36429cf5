// Runs every test/**/*.test.ts with node's test runner (through tsx), or the
// files given as arguments. Node 20's --test takes no globs, so we expand them.
// Tests that spawn bin/platform-api.js run the compiled build: it is made first when stale.
import { spawnSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { buildIfStale } from "./build-if-stale.mjs";

function collect(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return collect(path);
    return name.endsWith(".test.ts") ? [path] : [];
  });
}

buildIfStale();
const files = process.argv.length > 2 ? process.argv.slice(2) : collect("test").sort();
const result = spawnSync(
  process.execPath,
  ["--import", "tsx", "--test", "--test-concurrency=2", "--test-reporter=spec", ...files],
  { stdio: "inherit" },
);
process.exit(result.status ?? 1);
