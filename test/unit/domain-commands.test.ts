// The commands each domain declares are the ones the CLI lists (src/server/commands.ts), and
// the list loads no domain: a command imports what it runs with when it runs.
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { test } from "node:test";
import { cruise, type IConfiguration } from "dependency-cruiser";
import { DOMAIN_COMMANDS } from "../../src/server/commands.js";
import { DOMAINS } from "../../src/server/domains.js";
import { inRepo, ROOT } from "../support/repo.js";

const require = createRequire(import.meta.url);
const config = require(inRepo(".dependency-cruiser.cjs")) as IConfiguration;

test("the CLI's list of domain commands is what the domains declare", () => {
  const declared = DOMAINS.flatMap((d) => Object.entries(d.commands ?? {}));
  assert.deepEqual(Object.keys(DOMAIN_COMMANDS).sort(), declared.map(([name]) => name).sort());
  for (const [name, command] of declared) assert.equal(DOMAIN_COMMANDS[name], command, name);
});

test("the list's static imports reach no domain module, service, store or generated code", async () => {
  const result = await cruise(["src/server/commands.ts"], { ...config.options, exclude: { path: "^node_modules/" }, baseDir: ROOT, tsConfig: undefined });
  if (typeof result.output === "string") throw new Error("expected the cruise result as an object");
  const modules = new Map(result.output.modules.map((m) => [m.source, m]));
  const reached = new Set<string>();
  const visit = (source: string) => {
    if (reached.has(source)) return;
    reached.add(source);
    for (const dependency of modules.get(source)?.dependencies ?? []) {
      if (!dependency.dynamic && !dependency.dependencyTypes.includes("type-only") && dependency.resolved.startsWith("src/")) visit(dependency.resolved);
    }
  };
  visit("src/server/commands.ts");
  const heavy = [...reached].filter((source) => /^gen\/|\/(module|index)\.ts$|-service\.ts$|\/store\/|^src\/store\//.test(source));
  assert.deepEqual(heavy, [], `reached: ${[...reached].join(", ")}`);
  assert.ok(reached.has("src/domains/registry/commands.ts"));
});
