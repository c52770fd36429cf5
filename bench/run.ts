import { fork, type ChildProcess } from "node:child_process";
import { availableParallelism, loadavg } from "node:os";
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { GroupsService } from "../gen/platform/iam/v2/groups_service_pb.js";
import { PingService } from "../gen/platform/ping/v2/ping_pb.js";
import { clientFor, type Protocol, type RpcCase } from "./clients.js";
import { runLoad, type LoadOptions, type LoadResult } from "./load.js";
import { cpuMicros, type BaselineReady, type CpuReport, type PlatformReady, type ReadyMessage } from "./servers/messages.js";

/**
 * `npm run bench [-- --json]`: throughput and latency of Ping, GetGroup and
 * ListGroups on the platform server over gRPC, Connect (HTTP/1.1 and h2c) and
 * REST, each next to a bare server of the same protocol answering Ping with
 * the same client code. Every server runs in its own child process; the load
 * runs here. Prints a table (or JSON with --json); exits 1 when any call failed
 * or a response did not verify.
 *
 * Environment: BENCH_SECONDS (recorded seconds per figure, default 2),
 * BENCH_WARMUP (seconds, default 0.5), BENCH_CONCURRENCY (calls in flight, default 16).
 */

const load: LoadOptions = {
  concurrency: Number(process.env.BENCH_CONCURRENCY ?? 16),
  warmupMs: Number(process.env.BENCH_WARMUP ?? 0.5) * 1000,
  durationMs: Number(process.env.BENCH_SECONDS ?? 2) * 1000,
};
const PAGE_SIZE = 50;
const PROTOCOLS: Protocol[] = ["grpc", "connect-h1", "connect-h2", "rest"];

const fixed = (n: number | undefined, digits: number) => (n === undefined || Number.isNaN(n) ? "-" : n.toFixed(digits));
const ratio = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? undefined : a / b);

/** Forks `bench/servers/<file>` and resolves with its ready message; rejects if it exits first. */
function startServer(file: string, args: string[] = []): Promise<{ child: ChildProcess; ready: ReadyMessage }> {
  const child = fork(new URL(`./servers/${file}`, import.meta.url), args, {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  return new Promise((resolve, reject) => {
    child.once("message", (ready) => resolve({ child, ready: ready as ReadyMessage }));
    child.once("exit", (code) => reject(new Error(`bench server ${file} ${args.join(" ")} exited with ${code} before listening`)));
  });
}

/** One figure: an RPC on one server over one protocol. */
interface Figure {
  label: string;
  protocol: Protocol;
  server: ChildProcess;
  port: number;
  rpc: RpcCase;
  /** Returns what is wrong with a response (as proto JSON), or undefined. */
  check(response: JsonObject): string | undefined;
}

interface Measured {
  result?: LoadResult;
  /** CPU time per recorded call, microseconds: the server process's and this (client) process's. */
  serverCpuUs?: number;
  clientCpuUs?: number;
  /** Why the figure was not timed (the verification call failed or returned the wrong thing). */
  problem?: string;
}

/** The CPU time `server` has used so far, microseconds. */
function serverCpu(server: ChildProcess): Promise<number> {
  return new Promise((resolve) => {
    const onReport = (report: CpuReport) => {
      server.off("message", onReport);
      resolve(report.cpuMicros);
    };
    server.on("message", onReport);
    server.send("cpu");
  });
}

/** Verifies one response, then runs the load; a fresh client per figure. */
async function measure(figure: Figure): Promise<Measured> {
  process.stderr.write(`  ${figure.label} over ${figure.protocol} on :${figure.port} ... `);
  const client = clientFor(figure.protocol, figure.port);
  try {
    const endpoint = client.bind(figure.rpc);
    let problem: string | undefined;
    try {
      problem = figure.check(endpoint.json(await endpoint.call()) as JsonObject);
    } catch (error) {
      problem = `verification call failed: ${(error as Error).message}`;
    }
    if (problem) {
      process.stderr.write(`NOT VERIFIED: ${problem}\n`);
      return { problem };
    }
    let atStart: { client: number; server: Promise<number> } | undefined;
    const result = await runLoad(endpoint.call, { ...load, onRecordStart: () => (atStart = { client: cpuMicros(), server: serverCpu(figure.server) }) });
    const clientEnd = cpuMicros();
    const serverEnd = await serverCpu(figure.server);
    const calls = result.ok + result.errors;
    const serverCpuUs = atStart ? (serverEnd - (await atStart.server)) / calls : undefined;
    const clientCpuUs = atStart ? (clientEnd - atStart.client) / calls : undefined;
    process.stderr.write(
      `${Math.round(result.rps)} req/s, CPU per call: server ${fixed(serverCpuUs, 0)} us, client ${fixed(clientCpuUs, 0)} us` +
        `${result.errors ? `, ${result.errors} ERRORS: ${result.errorSamples.join(" | ")}` : ""}\n`,
    );
    return { result, serverCpuUs, clientCpuUs };
  } finally {
    client.close();
  }
}

const field = (json: JsonValue, key: string) => (json as JsonObject | null)?.[key];

const isPong = (json: JsonObject) => (json.response === "pong" ? undefined : `expected {"response":"pong"}, got ${JSON.stringify(json)}`);

function platformFigures(ready: PlatformReady, server: ChildProcess): Figure[] {
  const ping: RpcCase = { method: PingService.method.ping, request: {}, restPath: "/ping/v2/ping" };
  const getGroup: RpcCase = {
    method: GroupsService.method.getGroup,
    request: { uid: ready.groupUid },
    restPath: `/iam/v2/groups/${ready.groupUid}`,
    token: ready.token,
  };
  const listGroups: RpcCase = {
    method: GroupsService.method.listGroups,
    request: { uidp: { childrenOf: ready.folderUid }, pageSize: PAGE_SIZE },
    restPath: `/iam/v2/groups?uidp.children_of=${encodeURIComponent(ready.folderUid)}&page_size=${PAGE_SIZE}`,
    token: ready.token,
  };
  const isGroup = (json: JsonObject) => (json.uid === ready.groupUid ? undefined : `expected group ${ready.groupUid}, got ${JSON.stringify(json).slice(0, 200)}`);
  const isPage = (json: JsonObject) => {
    const groups = field(json, "groups") as JsonValue[] | undefined;
    const total = String(field(json, "totalCount"));
    if (groups?.length === PAGE_SIZE && total === String(ready.childCount) && typeof json.nextPageToken === "string") return undefined;
    return `expected ${PAGE_SIZE} groups, totalCount "${ready.childCount}" and a next page token; got ${groups?.length} groups, totalCount ${total}`;
  };
  return PROTOCOLS.flatMap((protocol) => [
    { label: "Ping", protocol, server, port: ready.port, rpc: ping, check: isPong },
    { label: "GetGroup", protocol, server, port: ready.port, rpc: getGroup, check: isGroup },
    { label: `ListGroups (${PAGE_SIZE} of ${ready.childCount})`, protocol, server, port: ready.port, rpc: listGroups, check: isPage },
  ]);
}

interface Row {
  rpc: string;
  protocol: Protocol;
  figure: Measured;
  baseline: Measured;
  baselineName: string;
}

/** A Markdown table: each figure, its baseline, and figure / baseline ("x"). */
function table(rows: Row[]): string {
  const header = ["RPC", "protocol", "req/s", "p50 ms", "p99 ms", "CPU us", "baseline (Ping)", "req/s", "p50 ms", "p99 ms", "CPU us", "x req/s", "x p50", "x p99", "x CPU", "errors"];
  const textColumns = new Set([0, 1, 6]);
  const lines = rows.map(({ rpc, protocol, figure, baseline, baselineName }) => {
    const f = figure.result;
    const b = baseline.result;
    return [
      rpc,
      protocol,
      fixed(f?.rps, 0),
      fixed(f?.p50, 2),
      fixed(f?.p99, 2),
      fixed(figure.serverCpuUs, 0),
      baselineName,
      fixed(b?.rps, 0),
      fixed(b?.p50, 2),
      fixed(b?.p99, 2),
      fixed(baseline.serverCpuUs, 0),
      fixed(ratio(f?.rps, b?.rps), 2),
      fixed(ratio(f?.p50, b?.p50), 2),
      fixed(ratio(f?.p99, b?.p99), 2),
      fixed(ratio(figure.serverCpuUs, baseline.serverCpuUs), 2),
      figure.problem ? "NOT VERIFIED" : f?.errors ? `${f.errors} !` : "0",
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const format = (cells: string[]) => `| ${cells.map((c, i) => (textColumns.has(i) ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(" | ")} |`;
  const rule = `|${widths.map((w, i) => `-${"-".repeat(w)}${textColumns.has(i) ? "-" : ":"}`).join("|")}|`;
  return [format(header), rule, ...lines.map(format)].join("\n");
}

async function main() {
  const started = performance.now();
  process.stderr.write(
    `bench: ${availableParallelism()} cores, Node ${process.version}, ${load.concurrency} calls in flight, ` +
      `${load.warmupMs / 1000}s warm-up + ${load.durationMs / 1000}s per figure; load average ${loadavg()[0].toFixed(2)}\n`,
  );
  const servers = await Promise.all([startServer("platform.ts"), startServer("baselines.ts", ["connect"]), startServer("baselines.ts", ["grpc"]), startServer("baselines.ts", ["http"])]);
  try {
    const platform = servers[0].ready as PlatformReady;
    const [connect, grpcJs, plain] = servers.slice(1).map((s) => s.ready as BaselineReady);
    process.stderr.write(`  seeded ${platform.childCount} groups in ${Math.round(platform.seedMs)} ms\n`);

    const pingCase: RpcCase = { method: PingService.method.ping, request: {}, restPath: "/ping/v2/ping" };
    const baselines: Record<Protocol, { name: string; server: ChildProcess; port: number }> = {
      grpc: { name: "grpc-js", server: servers[2].child, port: grpcJs.h2Port! },
      "connect-h1": { name: "connect-node", server: servers[1].child, port: connect.h1Port! },
      "connect-h2": { name: "connect-node", server: servers[1].child, port: connect.h2Port! },
      rest: { name: "node:http", server: servers[3].child, port: plain.h1Port! },
    };
    const figures = platformFigures(platform, servers[0].child);
    const rows: Row[] = [];
    for (const protocol of PROTOCOLS) {
      const base = baselines[protocol];
      const baseline = await measure({ label: `Ping (${base.name} baseline)`, protocol, server: base.server, port: base.port, rpc: pingCase, check: isPong });
      for (const figure of figures.filter((f) => f.protocol === protocol)) {
        rows.push({ rpc: figure.label, protocol, figure: await measure(figure), baseline, baselineName: base.name });
      }
    }
    // Reference: the bare Connect handler over gRPC, against grpc-js (the framework's own cost).
    const bareConnectGrpc = await measure({ label: "Ping (bare connect-node)", protocol: "grpc", server: servers[1].child, port: connect.h2Port!, rpc: pingCase, check: isPong });
    rows.push({ rpc: "Ping on bare connect-node", protocol: "grpc", figure: bareConnectGrpc, baseline: rows[0].baseline, baselineName: "grpc-js" });

    if (process.argv.includes("--json")) {
      const json = rows.map(({ rpc, protocol, figure, baseline, baselineName }) => ({
        rpc,
        protocol,
        ...figure,
        baseline: { name: baselineName, ...baseline },
        ratio: {
          rps: ratio(figure.result?.rps, baseline.result?.rps),
          p50: ratio(figure.result?.p50, baseline.result?.p50),
          p99: ratio(figure.result?.p99, baseline.result?.p99),
          serverCpu: ratio(figure.serverCpuUs, baseline.serverCpuUs),
        },
      }));
      process.stdout.write(`${JSON.stringify({ cores: availableParallelism(), node: process.version, load, rows: json }, null, 2)}\n`);
    } else {
      process.stdout.write(`${table(rows)}\n`);
      process.stdout.write(
        `CPU us = server CPU time per call. x = figure / baseline. ${load.concurrency} calls in flight; ${load.durationMs / 1000}s recorded per figure.\n`,
      );
    }
    const failed = rows.filter((r) => r.figure.problem || r.baseline.problem || r.figure.result?.errors || r.baseline.result?.errors);
    for (const r of failed) {
      process.stderr.write(`FLAGGED ${r.rpc} over ${r.protocol}: ${r.figure.problem ?? r.baseline.problem ?? [...(r.figure.result?.errorSamples ?? []), ...(r.baseline.result?.errorSamples ?? [])].join(" | ")}\n`);
    }
    process.stderr.write(`bench: done in ${((performance.now() - started) / 1000).toFixed(1)} s; load average ${loadavg()[0].toFixed(2)}\n`);
    process.exitCode = failed.length > 0 ? 1 : 0;
  } finally {
    const exited = servers.map(({ child }) => new Promise((resolve) => child.once("exit", resolve)));
    for (const { child } of servers) child.disconnect();
    await Promise.all(exited);
  }
}

await main();
// Clients may keep idle sockets (HTTP/2 sessions) open; the bench is over.
process.exit();
