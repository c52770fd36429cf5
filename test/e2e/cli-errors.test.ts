import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { promisify } from "node:util";
import pg from "pg";
import { dropFresh, testDatabases } from "../support/databases.js";
import { openStore } from "../../src/server/open-store.js";
import { randomUUID } from "node:crypto";
import { bootstrapChild, startChildServer } from "../support/child-server.js";
import { BIN } from "../support/repo.js";

/**
 * What the command line answers to mistakes, through the real process: one line on stderr
 * naming the option and what it wants, exit status 2, never a stack trace; help that asks for
 * nothing else. And the serve options that shape the server: limits, pool size, the banner.
 */

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), "platform-api-cli-errors-"));
after(() => rmSync(dir, { recursive: true, force: true }));
const env = { ...process.env, DATABASE_URL: "", PORT: "", API_URL: "", REGISTRY_DIR: "", LOG_LEVEL: "", MAX_BODY_BYTES: "" };

const databases = await testDatabases();

const cli = (args: string[], extraEnv: Record<string, string> = {}) => run(process.execPath, [BIN, ...args], { env: { ...env, ...extraEnv }, encoding: "utf8", timeout: 30_000 });

/** Runs `args`, expecting exit 2 and exactly one line on stderr matching `message`. */
async function refused(args: string[], message: RegExp, extraEnv: Record<string, string> = {}): Promise<void> {
  await assert.rejects(cli(args, extraEnv), (e: { code: number; stderr: string; stdout: string }) => {
    assert.equal(e.code, 2, `${args.join(" ")}: ${e.stderr}`);
    assert.equal(e.stderr.split("\n").filter(Boolean).length, 1, `one line for ${args.join(" ")}:\n${e.stderr}`);
    assert.match(e.stderr, message);
    assert.doesNotMatch(e.stderr, /\n\s+at /, "no stack trace");
    assert.equal(e.stdout, "");
    return true;
  });
}

describe("usage errors are one line and exit 2", () => {
  test("ports", async () => {
    await Promise.all([
      refused(["serve", "--port", "abc"], /^platform-api: --port: "abc" is not a port number \(0 to 65535\) \(see "platform-api serve --help"\)$/m),
      refused(["serve", "--registry-port", "65536"], /--registry-port: "65536" is not a port number/),
      refused(["serve", "--port", "-1"], /Option '--port' argument is ambiguous \(see "platform-api serve --help"\)/),
      refused(["serve"], /--port: "80a" is not a port number/, { PORT: "80a" }),
    ]);
  });

  test("log levels are the known ones only, not anything an object has", async () => {
    await Promise.all([
      refused(["serve", "--log-level", "toString"], /--log-level: "toString" is not one of debug, info, warn, error, silent/),
      refused(["serve", "--log-level", "__proto__"], /--log-level: "__proto__" is not one of/),
      refused(["serve"], /--log-level: "verbose" is not one of/, { LOG_LEVEL: "verbose" }),
    ]);
  });

  test("limits, the pool size and URLs", async () => {
    await Promise.all([
      refused(["serve", "--max-body-bytes", "4x"], /--max-body-bytes: "4x" is not a size: bytes, or 512KiB, 4MiB, 10GiB/),
      refused(["serve", "--max-body-bytes", "0"], /--max-body-bytes: must be more than 0/),
      refused(["serve", "--request-timeout", "30"], /--request-timeout: "30" is not a duration such as 500ms, 30s, 2m or 1h/),
      refused(["serve", "--max-connections", "1.5"], /--max-connections: "1.5" is not a whole number/),
      refused(["serve", "--db-pool-size", "0"], /--db-pool-size: must be more than 0/),
      refused(["serve", "--db-pool-size", "5000"], /--db-pool-size: 5000 is more than 1000/),
      refused(["serve", "--events-concurrency", "0"], /--events-concurrency: must be more than 0/),
      refused(["serve", "--events-concurrency", "many"], /--events-concurrency: "many" is not a whole number/),
      refused(["serve", "--api-url", "localhost:8080"], /--api-url: "localhost:8080" is not an http:\/\/ or https:\/\/ URL/),
      refused(["token", "--identity", "x", "--ttl", "soon"], /--ttl: "soon" is not a duration/),
      refused(["serve", "--events-retention", "1w"], /--events-retention: "1w" is not a duration like 90s, 15m, 1h or 7d/),
      refused(["serve", "--events-retry-period", "0s"], /--events-retry-period: must be at least 1s/),
      refused(["serve"], /--events-retention: "soon" is not a duration/, { EVENTS_RETENTION: "soon" }),
      // A bare number could be any unit: it is refused, never read as seconds.
      refused(["serve", "--events-retention", "7"], /--events-retention: "7" is not a duration like 90s, 15m, 1h or 7d \(the unit is required\)/),
      refused(["registry", "gc", "--grace", "24"], /"24" is not a duration like 90s, 15m, 1h or 7d \(the unit is required\)/),
      refused(["token", "--identity", "x", "--ttl", "600"], /--ttl: "600" is not a duration/),
      refused(["keys", "rotate", "--activate-in", "3600"], /"3600" is not a duration/),
    ]);
  });

  test("unknown commands, subcommands and options, and options a command does not use", async () => {
    await Promise.all([
      refused(["serv"], /unknown command "serv"; the commands are serve, bootstrap, token, owners, registry, advisories, libraries, keys, login, logout, whoami, invite, pull-token, auth \(see "platform-api --help"\)/),
      refused(["toString"], /unknown command "toString"/),
      refused(["registry"], /registry needs a subcommand: import, gc or retention \(see "platform-api registry --help"\)/),
      refused(["registry", "push"], /unknown registry subcommand "push"; it has import, gc and retention \(see "platform-api registry --help"\)/),
      refused(["serve", "--verbose"], /--verbose is not an option of serve \(see "platform-api serve --help"\)/),
      refused(["bootstrap", "--org", "acme", "--registry-dir", "x"], /--registry-dir is not an option of bootstrap/),
      refused(["token", "--identity", "x", "--registry-dir", "x"], /--registry-dir is not an option of token/),
      refused(["registry", "import", "--repo", "acme/a", "--api-url", "http://x", "layout"], /--api-url is not an option of registry import/),
      refused(["registry", "gc", "--api-url", "http://x"], /--api-url is not an option of registry gc/),
      refused(["advisories", "import", "--registry-dir", "x", "feed"], /--registry-dir is not an option of advisories import/),
      refused(["serve", "extra"], /serve takes no arguments besides its options: "extra"/),
    ]);
  });

  test("a port in use names the port and the address", async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      await refused(["serve", "--host", "127.0.0.1", "--port", String(port), "--registry-port", "0", "--db", ":memory:"], new RegExp(`^platform-api: --port ${port}: 127\\.0\\.0\\.1:${port} is already in use by another process$`, "m"));
      await refused(["serve", "--host", "127.0.0.1", "--port", "0", "--registry-port", String(port), "--db", ":memory:"], new RegExp(`--registry-port ${port}: 127\\.0\\.0\\.1:${port} is already in use`));
    } finally {
      blocker.close();
    }
  });

  test("a serve that fails to bind has changed nothing: no pruning before every listener is up", async () => {
    const dir = mkdtempSync(join(tmpdir(), "platform-api-busy-"));
    const db = join(dir, "platform.db");
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      await bootstrapChild(db, "acme");
      const store = await openStore(db);
      const old = { position: "0", type: "dev.platform.api.iam.group.created.v1", subject: "s", group_uid: "g", time: 1, actor: "{}", body: "{}", body_type: "" };
      await store.db.insertInto("events").values({ id: randomUUID(), ...old }).execute();
      await store.close();
      await refused(["serve", "--host", "127.0.0.1", "--port", String(port), "--registry-port", "0", "--db", db, "--events-retention", "1s"], /already in use/);
      const after = await openStore(db);
      const left = await after.db.selectFrom("events").select("id").execute();
      await after.close();
      assert.equal(left.length, 1, "the event older than the retention is still there");
    } finally {
      blocker.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("an address the machine does not have, and a database that does not answer", async () => {
    await Promise.all([
      refused(["serve", "--host", "192.0.2.1", "--port", "0", "--registry-port", "0", "--db", ":memory:"], /--host 192\.0\.2\.1: not an address of this machine/),
      refused(["serve", "--db", "postgres://postgres@127.0.0.1:1/test", "--port", "0", "--registry-port", "0"], /connect ECONNREFUSED 127\.0\.0\.1:1 \(the database of --db\)/),
    ]);
  });
});

describe("help", () => {
  test("registry, advisories and libraries list their subcommands; every usage line says [options] once", async () => {
    for (const [group, subs] of [["registry", ["import", "gc"]], ["advisories", ["import"]], ["libraries", ["import"]]] as const) {
      const { stdout } = await cli([group, "--help"]);
      assert.match(stdout, new RegExp(`^Usage: platform-api ${group} <subcommand> \\[options\\]$`, "m"));
      for (const sub of subs) assert.match(stdout, new RegExp(`^  ${group} ${sub} `, "m"));
    }
    const usages = await Promise.all(
      [["serve"], ["bootstrap"], ["token"], ["registry", "import"], ["registry", "gc"], ["advisories", "import"], ["libraries", "import"]].map(async (command) => {
        const { stdout } = await cli([...command, "--help"]);
        return stdout.split("\n")[0];
      }),
    );
    assert.deepEqual(usages, [
      "Usage: platform-api serve [options]",
      "Usage: platform-api bootstrap [options]",
      "Usage: platform-api token [options]",
      "Usage: platform-api registry import [options] <path>...",
      "Usage: platform-api registry gc [options]",
      "Usage: platform-api advisories import [options] <file | directory | .zip>...",
      "Usage: platform-api libraries import [options] <file | directory>...",
    ]);
  });

  test("serve --help lists every limit with its default and environment variable, and the TLS options", async () => {
    const { stdout } = await cli(["serve", "--help"]);
    for (const line of [
      /--max-body-bytes <value> .* \(env MAX_BODY_BYTES, default 4MiB\)/,
      /--request-timeout <value> .* \(env REQUEST_TIMEOUT, default 30s\)/,
      /--max-blob-bytes <value> .* \(env MAX_BLOB_BYTES, default 10GiB\)/,
      /--keep-alive-timeout <value> .* \(env KEEP_ALIVE_TIMEOUT, default 65s\)/,
      /--db-pool-size <value> .* \(env DB_POOL_SIZE, default 10\)/,
      /--tls-cert <value> .* \(env TLS_CERT\)/,
      /--tls-key <value> .* \(env TLS_KEY\)/,
    ]) {
      assert.match(stdout, line);
    }
  });
});

describe("serve options that shape the server", () => {
  test("the banner names the address bound, not localhost", async () => {
    const server = await startChildServer({ db: join(dir, "banner.db"), registryDir: join(dir, "registry") });
    try {
      assert.match(server.stderr(), new RegExp(`^platform-api: API on http://127\\.0\\.0\\.1:${server.apiPort}, registry on http://127\\.0\\.0\\.1:${server.registryPort}, store `, "m"));
    } finally {
      server.child.kill("SIGTERM");
      await server.exit;
    }
  });

  test("MAX_BODY_BYTES (and --max-body-bytes) bound a request body", async () => {
    const server = await startChildServer({ db: join(dir, "limits.db"), registryDir: join(dir, "registry"), args: ["--max-body-bytes", "1KiB"] });
    try {
      const post = (bytes: number) =>
        fetch(`${server.apiUrl}/iam/v2/groups/${"0".repeat(40)}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "x".repeat(bytes) }) });
      const refusedBody = await post(2048);
      assert.equal(refusedBody.status, 413);
      assert.equal(((await refusedBody.json()) as { details: Array<{ reason?: string }> }).details[0].reason, "REQUEST_TOO_LARGE");
      assert.notEqual((await post(100)).status, 413);
    } finally {
      server.child.kill("SIGTERM");
      await server.exit;
    }
  });

  for (const database of databases.filter((d) => d.name === "postgres")) {
    test("--db-pool-size bounds the PostgreSQL connections", { skip: database.skip }, async () => {
      const fresh = await database.fresh();
      const application = `pool-check-${process.pid}`;
      const url = new URL(fresh);
      url.searchParams.set("application_name", application);
      const { org, ownerToken } = await bootstrapChild(fresh, "pool");
      const server = await startChildServer({ db: url.toString(), registryDir: join(dir, "registry"), args: ["--db-pool-size", "2"] });
      const client = new pg.Client({ connectionString: fresh });
      await client.connect();
      try {
        // 40 reads at once, each several store queries: the pool opens at most 2 connections (10 by default).
        const lists = Array.from({ length: 40 }, () => fetch(`${server.apiUrl}/iam/v2/groups?uidp.children_of=${org.uid}`, { headers: { authorization: `Bearer ${ownerToken}` } }));
        for (const answer of await Promise.all(lists)) assert.equal(answer.status, 200, await answer.text());
        const { rows } = await client.query<{ n: string }>("select count(*) as n from pg_stat_activity where application_name = $1", [application]);
        assert.ok(Number(rows[0].n) >= 1 && Number(rows[0].n) <= 2, `${rows[0].n} connections`);
      } finally {
        await client.end();
        server.child.kill("SIGTERM");
        await server.exit;
        await dropFresh(fresh);
      }
    });
  }
});
