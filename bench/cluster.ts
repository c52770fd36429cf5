import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { GroupsService } from "../gen/platform/iam/v2/groups_service_pb.js";
import { ReposService } from "../gen/platform/registry/v2/repos_service_pb.js";
import { TagsService } from "../gen/platform/registry/v2/tags_service_pb.js";
import { newChildUid } from "../src/aip/uidp.js";
import { insertGroup } from "../src/domains/iam/store/groups.js";
import { insertRepo } from "../src/domains/registry/store/repos.js";
import { openStore } from "../src/server/open-store.js";
import { bootstrapChild, startChildServer, type ChildServer } from "../test/support/child-server.js";
import { POSTGRES_URL } from "../test/support/databases.js";
import { grpcClient, type ProtocolClient } from "./clients.js";
import { runLoad } from "./load.js";

/**
 * Replicas (`npm run bench:cluster`): one mixed read/write workload against 1, 2 and 3 `serve`
 * processes on one PostgreSQL database, and against 1 on a SQLite file, in one run. A gRPC client
 * (one HTTP/2 connection per replica) sends each call to the next replica in turn; per ten calls:
 * GetGroup ×4, ListGroups (a page of 20 of 50) ×3, GetRepo ×1, CreateTag ×2 (each worker moves its
 * own tag back and forth: a tag row and a history record written per call).
 *
 * Reported per configuration: calls/s, latency, and CPU per call of the server processes, of the
 * PostgreSQL backends serving them (from /proc, the backends of the bench's own database) and of
 * this client. On a machine with few cores the replicas, PostgreSQL and the client share them, so
 * throughput cannot grow with replicas here: CPU per call is the figure that carries over.
 * BENCH_SECONDS (default 10) per configuration, BENCH_CONCURRENCY (default 24) calls in flight.
 */
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 24);
const WARMUP_MS = Math.min(3000, SECONDS * 300);
const TICK_US = 1_000_000 / 100; // USER_HZ: /proc times are in 1/100 s on Linux

/** utime + stime of a process, µs; 0 once it is gone. */
function cpuOf(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return (Number(fields[11]) + Number(fields[12])) * TICK_US;
  } catch {
    return 0;
  }
}

interface Configuration {
  label: string;
  dialect: "sqlite" | "postgres";
  replicas: number;
}

interface Figure extends Configuration {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  serverUs: number;
  postgresUs: number;
  clientUs: number;
}

async function measure(configuration: Configuration): Promise<Figure> {
  const dir = mkdtempSync(join(tmpdir(), "platform-api-bench-cluster-"));
  const database = `bench_${randomBytes(5).toString("hex")}`;
  let url = join(dir, "platform.db");
  if (configuration.dialect === "postgres") {
    const admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
    await admin.query(`create database ${database}`);
    await admin.end();
    url = `${POSTGRES_URL.replace(/\/[^/?]*(\?.*)?$/, "")}/${database}`;
  }
  const replicas: ChildServer[] = [];
  const clients: ProtocolClient[] = [];
  try {
    const boot = await bootstrapChild(url, "bench");
    const store = await openStore(url, { poolSize: 2 });
    const now = Date.now();
    for (let i = 0; i < 50; i++) await insertGroup(store.db, { uid: newChildUid(boot.org.uid), parent_uid: boot.org.uid, name: `team-${i}`, description: "", create_time: now, update_time: now });
    const repo = await insertRepo(store.db, { uid: newChildUid(boot.org.uid), group_uid: boot.org.uid, name: "app", description: "", readme: "", create_time: now, update_time: now });
    await store.close();

    for (let i = 0; i < configuration.replicas; i++) replicas.push(await startChildServer({ db: url, registryDir: join(dir, "registry"), args: ["--db-pool-size", "8"] }));
    const token = boot.ownerToken;
    const TAGS = 64;
    const MIX = ["getGroup", "listGroups", "getGroup", "moveTag", "getRepo", "getGroup", "listGroups", "getGroup", "listGroups", "moveTag"] as const;
    for (const replica of replicas) clients.push(grpcClient(replica.apiPort));
    const bound = clients.map((client) => ({
      getGroup: client.bind({ method: GroupsService.method.getGroup, request: { uid: boot.org.uid }, restPath: "", token }),
      listGroups: client.bind({ method: GroupsService.method.listGroups, request: { uidp: { childrenOf: boot.org.uid }, pageSize: 20 }, restPath: "", token }),
      getRepo: client.bind({ method: ReposService.method.getRepo, request: { uid: repo.uid }, restPath: "", token }),
      moveTag: Array.from({ length: TAGS }, (_, t) =>
        ["a", "b"].map((digit) => client.bind({ method: TagsService.method.createTag, request: { parent: repo.uid, tag: { name: `t${t}`, digest: `sha256:${digit.repeat(64)}` } }, restPath: "", token })),
      ),
    }));
    // Call k goes to replica k mod N; the mix advances per round. Tag moves cycle over 64 tags, each
    // moved to the other digest than last time: every CreateTag writes a tag row and a history record.
    let next = 0;
    let moves = 0;
    const call = (): Promise<unknown> => {
      const k = next++;
      const endpoints = bound[k % bound.length];
      const op = MIX[Math.floor(k / bound.length) % MIX.length];
      if (op !== "moveTag") return endpoints[op].call();
      const m = moves++;
      return endpoints.moveTag[m % TAGS][Math.floor(m / TAGS) % 2].call();
    };
    const backends = async (): Promise<number[]> => {
      if (configuration.dialect !== "postgres") return [];
      const admin = new pg.Client({ connectionString: POSTGRES_URL });
      await admin.connect();
      const { rows } = await admin.query("select pid from pg_stat_activity where datname = $1", [database]);
      await admin.end();
      return rows.map((r: { pid: number }) => r.pid);
    };
    let pids: number[] = [];
    let started = { server: 0, postgres: 0, client: 0 };
    const sample = () => ({
      server: replicas.reduce((sum, r) => sum + cpuOf(r.child.pid!), 0),
      postgres: pids.reduce((sum, pid) => sum + cpuOf(pid), 0),
      client: process.cpuUsage().user + process.cpuUsage().system,
    });
    let recordStart: Promise<void> = Promise.resolve();
    const result = await runLoad(call, {
      concurrency: CONCURRENCY,
      warmupMs: WARMUP_MS,
      durationMs: SECONDS * 1000,
      onRecordStart: () => {
        recordStart = backends().then((found) => {
          pids = found;
          started = sample();
        });
      },
    });
    await recordStart;
    const ended = sample();
    const calls = result.ok + result.errors;
    return {
      ...configuration,
      rps: result.rps,
      p50: result.p50,
      p99: result.p99,
      errors: result.errors,
      serverUs: (ended.server - started.server) / calls,
      postgresUs: (ended.postgres - started.postgres) / calls,
      clientUs: (ended.client - started.client) / calls,
    };
  } finally {
    for (const client of clients) client.close();
    await Promise.all(
      replicas.map(async (replica) => {
        replica.child.kill("SIGTERM");
        await replica.exit;
      }),
    );
    if (configuration.dialect === "postgres") {
      const admin = new pg.Client({ connectionString: POSTGRES_URL });
      await admin.connect();
      await admin.query(`drop database if exists ${database} with (force)`);
      await admin.end();
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

const configurations: Configuration[] = [
  { label: "SQLite, 1 replica", dialect: "sqlite", replicas: 1 },
  { label: "PostgreSQL, 1 replica", dialect: "postgres", replicas: 1 },
  { label: "PostgreSQL, 2 replicas", dialect: "postgres", replicas: 2 },
  { label: "PostgreSQL, 3 replicas", dialect: "postgres", replicas: 3 },
];
const figures: Figure[] = [];
for (const configuration of configurations) {
  const figure = await measure(configuration);
  figures.push(figure);
  process.stderr.write(`${configuration.label}: ${figure.rps.toFixed(0)} calls/s\n`);
}
const single = figures.find((f) => f.dialect === "postgres" && f.replicas === 1)!;
const fixed = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : "-");
const rows = figures.map((f) => [
  f.label,
  fixed(f.rps),
  f.dialect === "postgres" ? fixed(f.rps / single.rps, 2) : "",
  fixed(f.p50, 1),
  fixed(f.p99, 1),
  fixed(f.serverUs),
  f.dialect === "postgres" ? fixed(f.postgresUs) : "",
  fixed(f.clientUs),
  String(f.errors),
]);
const header = ["configuration", "calls/s", "vs 1 PG replica", "p50 ms", "p99 ms", "server CPU µs/call", "PostgreSQL CPU µs/call", "client CPU µs/call", "errors"];
process.stdout.write(
  `Mixed workload (GetGroup 4, ListGroups 3, GetRepo 1, CreateTag 2 per 10 calls), gRPC, ${CONCURRENCY} in flight, ${SECONDS} s each, ${(await import("node:os")).cpus().length} cores\n` +
    [header, ...rows].map((r) => `| ${r.join(" | ")} |`).join("\n") +
    "\n",
);
