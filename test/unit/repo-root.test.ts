// test/support/repo.ts finds the repository's root whether the tests run compiled (`npm test`, from
// dist/test/) or as written (`node --import tsx --test test/...`), as README's table says.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { inRepo, ROOT } from "../support/repo.js";

test("the root holds this repository's package.json, from either place", async () => {
  assert.equal((JSON.parse(readFileSync(inRepo("package.json"), "utf8")) as { name: string }).name, "platform-api");
  const source = pathToFileURL(inRepo("test/support/repo.ts")).href;
  const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", "--input-type=module", "-e", `const { ROOT } = await import(${JSON.stringify(source)}); console.log(ROOT);`], { cwd: ROOT, timeout: 60_000 });
  assert.equal(stdout.trim(), ROOT);
});
