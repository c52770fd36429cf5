// Runs every test/**/*.test.ts with node's test runner, or the files given as arguments, compiled:
// src/ and gen/ by tsc into dist/ when stale (what bin/platform-api.js runs, so tests that spawn
// the command run the same code), the tests by esbuild into dist/test/ every time (a second).
// Node 20's --test takes no globs, so we expand them.
//
// Files that share nothing share a process (docs/testing.md): a file under test/unit, test/services,
// test/store or test/rest runs with up to seven others of its directory, one file after another,
// its tests inside a suite named after it, unless it carries the comment `// test-process: own` or
// it (or a test/ helper it imports) changes or measures the process: writes process.env, handles
// process events, exits or signals, replaces a global, mocks timers or another module's functions,
// sets V8 flags, measures memory or CPU, starts child processes, threads or an interval timer
// (the patterns are PROCESS_STATE in scripts/test-processes.mjs). Every other file, and a single
// file given alone, runs in its own process as node --test runs a file.
//
//   node scripts/run-tests.mjs [files...]   run them (all tests without files)
//   --plan                                  print which files share a process, run nothing
//   TEST_PROCESSES=per-file                 one process per file, as node --test alone would
import { spawnSync } from "node:child_process";
import { buildIfStale } from "./build-if-stale.mjs";
import { buildTests, compiledTest, testSources } from "./build-tests.mjs";
import { planProcesses, writeGroupEntries } from "./test-processes.mjs";

const args = process.argv.slice(2);
const planOnly = args.includes("--plan");
const named = args.filter((arg) => arg !== "--plan");
const sources = named.length > 0 ? named : testSources().filter((path) => path.endsWith(".test.ts")).sort();
const plan = process.env.TEST_PROCESSES === "per-file" || sources.length === 1 ? { alone: sources.map((source) => ({ source })), groups: [] } : planProcesses(sources);

if (planOnly) {
  for (const { name, members } of plan.groups) console.log(`${name}: ${members.join(" ")}`);
  for (const { source, reason } of plan.alone) console.log(`alone: ${source}${reason ? ` (${reason})` : ""}`);
  console.log(`${plan.groups.length + plan.alone.length} processes for ${sources.length} files`);
  process.exit(0);
}

buildIfStale();
await buildTests();
const entries = [...writeGroupEntries(plan.groups), ...plan.alone.map(({ source }) => compiledTest(source))];
const result = spawnSync(process.execPath, ["--enable-source-maps", "--test", "--test-concurrency=2", "--test-reporter=spec", ...entries], {
  stdio: "inherit",
});
process.exit(result.status ?? 1);
