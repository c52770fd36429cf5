import { spawnSync } from "node:child_process";

/**
 * What the tests driving `skopeo` (Debian package) share. `.ci/run` installs it and sets
 * REQUIRE_SKOPEO=1, so that in CI its absence fails instead of skipping.
 */
const missing = spawnSync("skopeo", ["--version"]).status !== 0;
if (missing && process.env.REQUIRE_SKOPEO === "1") throw new Error("skopeo is required (REQUIRE_SKOPEO=1) but not installed: apt-get install skopeo");

/** A reason to skip, or undefined when skopeo is installed. */
export const skopeoSkip = missing ? "skopeo is not installed (apt-get install skopeo); .ci/run installs it" : undefined;

/** A free loopback port (a registry URL, the token audience, must be known before it listens). */
export { freePort } from "./test-server.js";
