import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import net from "node:net";
import { test } from "node:test";
import { promisify } from "node:util";
import { sql } from "kysely";
import { startTestServer } from "../support/test-server.js";
import { inRepo } from "../support/repo.js";

/**
 * What the container image relies on, checked without a container engine (none runs here; CI
 * builds the image where one answers): the HEALTHCHECK command against a live server, and the
 * Dockerfile's build context (every file it copies exists and .dockerignore keeps it).
 */

const run = promisify(execFile);
const HEALTHCHECK = inRepo("bin/healthcheck.js");

/** The exit status of the image's HEALTHCHECK command with `env`. */
async function healthcheck(env: Record<string, string>): Promise<number> {
  try {
    await run(process.execPath, [HEALTHCHECK], { env: { ...process.env, TLS_CERT: "", ...env }, timeout: 10_000 });
    return 0;
  } catch (error) {
    return (error as { code: number }).code;
  }
}

test("the HEALTHCHECK command: 0 while /readyz answers 200, 1 when the server is not ready or not there", async () => {
  const server = await startTestServer();
  try {
    assert.equal(await healthcheck({ PORT: String(server.apiPort) }), 0);
    await sql`delete from kysely_migration`.execute(server.store.db);
    assert.equal(await healthcheck({ PORT: String(server.apiPort) }), 1, "not ready");
  } finally {
    await server.close();
  }
  const free = net.createServer();
  await new Promise<void>((resolve) => free.listen(0, "127.0.0.1", resolve));
  const port = (free.address() as net.AddressInfo).port;
  await new Promise((resolve) => free.close(resolve));
  assert.equal(await healthcheck({ PORT: String(port) }), 1, "nothing listening");
});

test("the Dockerfile: two stages, runs as node with the healthcheck, and copies only what the build context keeps", () => {
  const dockerfile = readFileSync(inRepo("Dockerfile"), "utf8");
  assert.equal(dockerfile.match(/^FROM /gm)?.length, 2);
  assert.match(dockerfile, /^USER node$/m);
  assert.match(dockerfile, /^HEALTHCHECK .*CMD \["node", "bin\/healthcheck\.js"\]$/m);
  assert.match(dockerfile, /^ENTRYPOINT \["node", "bin\/platform-api\.js"\]$/m);
  const ignored = readFileSync(inRepo(".dockerignore"), "utf8").split("\n").filter((line) => line !== "" && !line.startsWith("#"));
  const copied = [...dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((m) => m[1].split(" "));
  assert.ok(copied.length >= 6, copied.join(" "));
  for (const path of copied) {
    assert.ok(existsSync(inRepo(path)), `${path} exists`);
    assert.ok(!ignored.includes(path), `${path} is not in .dockerignore`);
  }
  for (const needed of ["package.json", "package-lock.json", "tsconfig.build.json", "src", "gen", "bin"]) assert.ok(copied.includes(needed), needed);
});
