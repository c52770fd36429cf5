import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import pg from "pg";
import { GroupsService } from "../../gen/platform/iam/v2/groups_service_pb.js";
import { ReposService } from "../../gen/platform/registry/v2/repos_service_pb.js";
import { TagsService } from "../../gen/platform/registry/v2/tags_service_pb.js";
import { bootstrapChild, type Bootstrapped } from "../support/child-server.js";
import { roundRobinWire, startCluster, type Cluster } from "../support/cluster.js";
import { POSTGRES_URL, testDatabases } from "../support/databases.js";
import { sha256 } from "../support/registry-push.js";
import { startS3Server, type TestS3 } from "../support/s3-server.js";
import { freePort } from "../support/test-server.js";
import { methodOf } from "../support/wires.js";

/**
 * Replicas behind PgBouncer in transaction mode (Debian's `pgbouncer`), with fewer server
 * connections than the replicas' pools: each transaction may run on another server connection,
 * so anything that relies on session state (a session advisory lock held across statements,
 * named prepared statements, `SET`) breaks here. Migrations at a start together, and again at a
 * restart, unique names and tag moves must all work. Skipped, with the reason, without the binary.
 */
const postgres = (await testDatabases()).find((d) => d.name === "postgres");
const hasPgbouncer = spawnSync("sh", ["-c", "command -v pgbouncer || test -x /usr/sbin/pgbouncer"]).status === 0;
const skip = postgres === undefined ? "TEST_DIALECTS excludes postgres" : (postgres.skip ?? (hasPgbouncer ? undefined : "pgbouncer is not installed (Debian package pgbouncer)"));
const BINARY = "/usr/sbin/pgbouncer";

describe("replicas through PgBouncer in transaction mode", { skip, timeout: 300_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), "platform-api-pgbouncer-"));
  // PgBouncer refuses to run as root: as root (CI), it runs as nobody, which must write its log there.
  chmodSync(dir, 0o777);
  const database = `pgb_${randomBytes(5).toString("hex")}`;
  let bouncer: ChildProcess | undefined;
  let url = "";
  let s3: TestS3;
  let cluster: Cluster | undefined;
  let boot: Bootstrapped;

  before(async () => {
    const admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
    await admin.query(`create database ${database}`);
    await admin.end();
    const target = new URL(POSTGRES_URL);
    const port = await freePort();
    writeFileSync(
      join(dir, "pgbouncer.ini"),
      [
        "[databases]",
        `${database} = host=${target.hostname} port=${target.port || 5432} dbname=${database} user=${decodeURIComponent(target.username || "postgres")}`,
        "[pgbouncer]",
        `listen_addr = 127.0.0.1`,
        `listen_port = ${port}`,
        `unix_socket_dir =`,
        "auth_type = any",
        "pool_mode = transaction",
        // Fewer server connections than the three replicas' pools hold: transactions share them.
        "default_pool_size = 3",
        "max_client_conn = 100",
        `logfile = ${join(dir, "pgbouncer.log")}`,
        `pidfile = ${join(dir, "pgbouncer.pid")}`,
        "",
      ].join("\n"),
    );
    const asRoot = process.getuid?.() === 0 ? ["-u", "nobody"] : [];
    bouncer = spawn(BINARY, [...asRoot, join(dir, "pgbouncer.ini")], { stdio: "ignore" });
    url = `postgres://app@127.0.0.1:${port}/${database}`;
    for (let i = 0; ; i++) {
      const probe = new pg.Client({ connectionString: url });
      try {
        await probe.connect();
        await probe.query("select 1");
        await probe.end();
        break;
      } catch (error) {
        await probe.end().catch(() => {});
        if (i > 50) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    s3 = await startS3Server();
  });
  after(async () => {
    await cluster?.stop();
    bouncer?.kill("SIGTERM");
    await s3?.close();
    const admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
    await admin.query(`drop database if exists ${database} with (force)`);
    await admin.end();
    rmSync(dir, { recursive: true, force: true });
  });

  test("three replicas migrate at once through it, restart, and keep names unique and tag histories whole", async () => {
    const start = () => startCluster({ size: 3, db: url, registryStorage: "s3://registry/pgbouncer", env: s3.env, args: ["--db-pool-size", "4"] });
    cluster = await start();
    boot = await bootstrapChild(url, "bouncer");
    await cluster.stop();
    cluster = await start();

    const wire = roundRobinWire(cluster.replicas);
    try {
      const groups = await Promise.all(
        Array.from({ length: 9 }, () =>
          wire.call(methodOf(GroupsService, "CreateGroup"), { parent: boot.org.uid, group: { name: "once" } }, { method: "POST", path: `/iam/v2/groups/${boot.org.uid}`, body: { name: "once" } }, boot.ownerToken),
        ),
      );
      assert.deepEqual(groups.map((g) => g.code).sort((a, b) => a - b), [0, ...Array(8).fill(6)], groups.map((g) => g.message).join("; "));

      const repo = await wire.call(methodOf(ReposService, "CreateRepo"), { parent: boot.org.uid, repo: { name: "app" } }, { method: "POST", path: `/registry/v2/repos/${boot.org.uid}`, body: { name: "app" } }, boot.ownerToken);
      assert.equal(repo.code, 0, repo.message);
      const repoUid = repo.body!.uid as string;
      const digests = Array.from({ length: 15 }, (_, i) => sha256(Buffer.from(`bounced-${i}`)));
      const moves = await Promise.all(
        digests.map((digest) =>
          wire.call(methodOf(TagsService, "CreateTag"), { parent: repoUid, tag: { name: "latest", digest } }, { method: "POST", path: `/registry/v2/tags/${repoUid}`, body: { name: "latest", digest } }, boot.ownerToken),
        ),
      );
      assert.deepEqual(moves.map((m) => m.code), Array(15).fill(0), moves.map((m) => m.message).join("; "));
      const direct = new pg.Client({ connectionString: `${POSTGRES_URL.replace(/\/[^/]*$/, "")}/${database}` });
      await direct.connect();
      const history = await direct.query("select digest from tag_history where repo_uid = $1 order by seq", [repoUid]);
      const tag = await direct.query("select digest from tags where repo_uid = $1 and name = 'latest'", [repoUid]);
      // pg_locks spans the cluster: other test files' migrations (under their own advisory lock) may run meanwhile.
      const held = await direct.query("select count(*)::int as n from pg_locks where locktype = 'advisory' and database = (select oid from pg_database where datname = current_database())");
      await direct.end();
      assert.deepEqual([...history.rows.map((r: { digest: string }) => r.digest)].sort(), [...digests].sort());
      assert.equal(history.rows.at(-1).digest, tag.rows[0].digest);
      assert.equal(held.rows[0].n, 0, "no advisory lock left held on a server connection");
    } finally {
      wire.close();
    }
  });
});
