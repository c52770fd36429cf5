// The layering rules of .dependency-cruiser.cjs (`npm run deps`, part of `npm run check`): they
// hold on src/, and each would catch a wrong-way import planted in a small tree of the same shape;
// so does the lint rule that only the jobs kit schedules (eslint.config.js).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { test } from "node:test";
import { cruise, type IConfiguration } from "dependency-cruiser";
import { ESLint } from "eslint";
import { inRepo, ROOT } from "../support/repo.js";

const require = createRequire(import.meta.url);
const config = require(inRepo(".dependency-cruiser.cjs")) as IConfiguration;

async function violations(baseDir: string): Promise<string[]> {
  const result = await cruise(["src"], { ...config.options, ruleSet: { forbidden: config.forbidden }, validate: true, baseDir, tsConfig: undefined });
  if (typeof result.output === "string") throw new Error("expected the cruise result as an object");
  return result.output.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`).sort();
}

test("wrong-way imports planted in a tree of src/'s shape are each caught by their rule", async () => {
  assert.deepEqual(await violations(inRepo("test/fixtures/layering")), [
    "access-imports-no-domain: src/access/planted.ts -> src/domains/iam/index.ts",
    "cli-client-is-only-a-client: src/cli/client/planted.ts -> src/domains/iam/index.ts",
    "command-kit-imports-only-the-store: src/command/planted.ts -> src/domains/iam/index.ts",
    "domain-through-its-face: src/store/planted.ts -> src/domains/iam/store/groups.ts",
    "domain-through-its-face: src/transport/oci/planted.ts -> src/domains/registry/store/tags.ts",
    "domain-to-domain-through-its-face: src/domains/registry/planted.ts -> src/domains/iam/store/groups.ts",
    "domains-no-transport: src/domains/iam/planted.ts -> src/transport/auth/routes.ts",
    "domains-no-transport: src/domains/registry/planted.ts -> src/transport/oci/host.ts",
    "kit-below-the-domains: src/domains/kit/planted.ts -> src/domains/iam/index.ts",
    "store-imports-nothing-above: src/store/planted.ts -> src/domains/iam/store/groups.ts",
  ]);
});

test("a timer planted in a domain is refused by the lint, and allowed in the jobs kit", async () => {
  const eslint = new ESLint({ cwd: ROOT });
  const lintedAs = async (fixture: string, path: string) => {
    const [result] = await eslint.lintText(readFileSync(inRepo("test/fixtures/layering", fixture), "utf8"), { filePath: inRepo(path) });
    return result.messages.map((m) => `${m.ruleId}: ${path}:${m.line}:${m.column}`);
  };
  assert.deepEqual(await lintedAs("src/domains/registry/planted-timer.ts", "src/domains/registry/planted-timer.ts"), [
    "no-restricted-imports: src/domains/registry/planted-timer.ts:2:10",
    "no-restricted-globals: src/domains/registry/planted-timer.ts:3:25",
    "no-restricted-properties: src/domains/registry/planted-timer.ts:3:54",
  ]);
  assert.deepEqual(await lintedAs("src/domains/kit/jobs/planted-timer.ts", "src/domains/kit/jobs/planted-timer.ts"), []);
});
