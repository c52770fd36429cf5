import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

/**
 * The repository's root (no trailing `/`), whether the tests run as TypeScript (this file is
 * test/support/repo.ts) or compiled, as `npm test` runs them (dist/test/support/repo.js). A test
 * names the repository's files (bin/, fixtures, docs, sources it reads or runs) from here, never
 * from its own module's URL, which differs between the two.
 */
export const ROOT = existsSync(resolve(here, "../../package.json")) ? resolve(here, "../..") : resolve(here, "../../..");

/** The absolute path of `parts` in the repository (`inRepo("test/fixtures", name)`). */
export function inRepo(...parts: string[]): string {
  return join(ROOT, ...parts);
}

/** `bin/platform-api.js`: the command as installed, running the compiled build in dist/. */
export const BIN = inRepo("bin/platform-api.js");
