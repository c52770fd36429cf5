import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";

/**
 * Headless Chromium for browser tests: Debian's `chromium` (or CHROMIUM_PATH), driven by
 * playwright-core. A test passes `{ skip: chromiumSkip }`: the reason is set when the binary is
 * missing. `.ci/run` installs chromium and sets REQUIRE_CHROMIUM=1, so that in CI its absence
 * fails (this module throws when loaded) instead of skipping.
 */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

const missing = !existsSync(CHROMIUM_PATH);
if (missing && process.env.REQUIRE_CHROMIUM === "1") throw new Error(`chromium is required (REQUIRE_CHROMIUM=1) but ${CHROMIUM_PATH} is missing: apt-get install chromium`);

/** Why browser tests are skipped here, or undefined when Chromium is available. */
export const chromiumSkip: string | undefined = missing ? `${CHROMIUM_PATH} is missing (apt-get install chromium); .ci/run installs it` : undefined;

/** Launches headless Chromium with the flags the tests use (no sandbox, no background traffic). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}
