// Runs every test/**/*.test.ts with node's test runner, or the files given as arguments, compiled:
// src/ and gen/ by tsc into dist/ when stale (what bin/platform-api.js runs, so tests that spawn
// the command run the same code), the tests by esbuild into dist/test/ every time (a second).
// Node 20's --test takes no globs, so we expand them.
import { spawnSync } from "node:child_process";
import { buildIfStale } from "./build-if-stale.mjs";
import { buildTests, compiledTest, testSources } from "./build-tests.mjs";

buildIfStale();
await buildTests();
const sources = process.argv.length > 2 ? process.argv.slice(2) : testSources().filter((path) => path.endsWith(".test.ts")).sort();
const result = spawnSync(
  process.execPath,
  ["--enable-source-maps", "--test", "--test-concurrency=2", "--test-reporter=spec", ...sources.map(compiledTest)],
  { stdio: "inherit" },
);
process.exit(result.status ?? 1);
