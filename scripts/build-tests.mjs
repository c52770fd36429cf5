// Compiles the tests (test/**/*.ts but test/fixtures) into dist/test/ with esbuild: one file each,
// imports as written, so `../../src/x.js` in test/e2e/ resolves to dist/src/x.js, the build that
// tsc made of the sources. `npm test` runs these with node alone: loading the server's modules
// through tsx's loader hooks in every test file cost more than the tests of many files did.
// Types are checked by `npm run typecheck`, not here (esbuild only strips them).
import { build } from "esbuild";
import { readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";

/** The test sources: TypeScript under test/, but declarations and the fixtures (data, not tests). */
export function testSources(dir = "test") {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return path === join("test", "fixtures") ? [] : testSources(path);
    return name.endsWith(".ts") && !name.endsWith(".d.ts") ? [path] : [];
  });
}

/** The compiled twin of a test source: test/e2e/x.test.ts -> dist/test/e2e/x.test.js. */
export function compiledTest(source) {
  return join("dist", source.replace(/\.ts$/, ".js"));
}

/** Compiles every test source afresh (a removed source leaves no compiled test behind). */
export async function buildTests() {
  rmSync(join("dist", "test"), { recursive: true, force: true });
  await build({
    entryPoints: testSources(),
    outdir: join("dist", "test"),
    outbase: "test",
    format: "esm",
    platform: "node",
    target: "node20",
    sourcemap: "inline",
    logLevel: "warning",
  });
}
