import { fork, type ChildProcess } from "node:child_process";
import { createReadStream } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { IdentitiesService } from "../gen/platform/iam/v2/identities_service_pb.js";
import { RoleBindingsService } from "../gen/platform/iam/v2/role_bindings_service_pb.js";
import { GroupsService } from "../gen/platform/iam/v2/groups_service_pb.js";
import { PingService } from "../gen/platform/ping/v2/ping_pb.js";
import { TagsService } from "../gen/platform/registry/v2/tags_service_pb.js";
import { AdvisoriesService } from "../gen/platform/vulnerabilities/v2/advisories_service_pb.js";
import { ArtifactsService } from "../gen/platform/libraries/v2/artifacts_service_pb.js";
import { clientFor, type Protocol, type RpcCase, type VerifiedBody } from "./clients.js";
import { measureImport, type ImportFigures } from "./import.js";
import { measureRegistryPeer, peerTable } from "./registry-peer.js";
import { runLoad, type LoadOptions, type LoadResult } from "./load.js";
import { cpuMicros, type BaselineReady, type CpuReport, type PlatformReady, type ReadyMessage, type TimedPass } from "./servers/messages.js";
import { blobHeaders, blobPath, LAYER_FILE_BYTES, MANIFEST_PATH, manifestHeaders, PULL_REPOSITORY, PULL_TAG } from "./servers/oci-image.js";
import { OSV_DIR } from "./servers/osv-feed.js";
import { QUERY_ECOSYSTEMS } from "./servers/seed-libraries.js";
import { HISTORY_ANSWERED, HISTORY_PATH, HISTORY_RECORDS, HISTORY_REPOSITORY, historyBody } from "./servers/tag-history.js";

/**
 * `npm run bench [-- --json]`: throughput and latency of Ping, GetGroup,
 * ListGroups, the IAM reads, ListTags, ListAdvisories (filtered by
 * `artifact_names` among 100,000 advisories) and ListArtifacts (a `query` among
 * 100,000 artifacts) on the platform server over gRPC,
 * Connect (HTTP/1.1 and h2c) and REST, each next to a bare server of the same
 * protocol answering Ping with the same client code (and ListAdvisories next
 * to ListGroups too); and of a 1000-record Tag
 * History read on the registry host next to a plain node:http route answering
 * the same body; and, on the registry host, the pull of a 50 MB layer blob and
 * of a manifest by tag, next to a node:http route streaming the same blob file
 * (answering the same manifest bytes) with the same headers; and the same pulls, a HEAD and a
 * skopeo push next to the CNCF distribution registry when Debian's `docker-registry` is installed
 * (`registry-peer.ts`: wrk as the client; BENCH_ONLY=peer for those alone). And, first, the
 * OSV import (`advisories import` of the 1,206 RustSec record files) in
 * records/s next to reading and `JSON.parse`-ing the same files (see
 * `import.ts`); and the import that seeds the server's 100,000 advisories next
 * to `JSON.parse`-ing the same records (see `servers/seed-advisories.ts`). Every server runs
 * in its own child process; the load
 * runs here. A first, discarded pass runs every figure briefly so that the JIT
 * of every server and of the client is warm before anything is recorded; then
 * BENCH_ROUNDS passes record every figure, and each figure reports its best
 * round (highest req/s): other load on the machine only ever slows a round down.
 * Prints a table (or JSON with --json); exits 1 when any call failed or a
 * response did not verify, in any round.
 *
 * Environment, in seconds per figure and round: BENCH_SECONDS (recorded,
 * default 2), BENCH_WARMUP (unrecorded, just before recording, default 0.5),
 * BENCH_PREWARM (the discarded first pass, default 1; 0 skips it). BENCH_ROUNDS
 * (default 2), BENCH_CONCURRENCY (calls in flight, default 16),
 * BENCH_BLOB_CONCURRENCY (blob pulls in flight, default 2). BENCH_ADVISORIES
 * (advisories the platform server stores, default 100000), BENCH_ARTIFACTS
 * (artifacts of its library index, default 100000), BENCH_OSV_DIR (the
 * OSV record files, default ../shared/data/osv/rustsec/crates from the repo root).
 * BENCH_ONLY: a comma-separated list of figures to run, each a prefix of a
 * figure's label, optionally `@protocol` (e.g. `GetGroup@grpc,ListGroups,Tag
 * History,Manifest`), case-insensitive; `import` selects the import figures.
 * When set, the server seeds only the advisories and artifacts the chosen
 * figures need. BENCH_PROFILE=<dir> runs the platform server with
 * `--cpu-prof --cpu-prof-dir=<dir>` (the profile is written when it exits). BENCH_DB=postgres
 * runs it on a fresh database of the local PostgreSQL server (TEST_POSTGRES_URL, default the CI
 * one), dropped at the end, instead of SQLite.
 * Each row whose figure has a goal (GOALS, from issue 16) prints it in a
 * `goal` column, marked `MISSED` when the figure's x CPU is above it.
 */

const seconds = (name: string, fallback: number) => Number(process.env[name] ?? fallback) * 1000;
const load: LoadOptions = {
  concurrency: Number(process.env.BENCH_CONCURRENCY ?? 16),
  warmupMs: seconds("BENCH_WARMUP", 0.5),
  durationMs: seconds("BENCH_SECONDS", 2),
};
const prewarmMs = seconds("BENCH_PREWARM", 1);
const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
/** Blob pulls in flight: a few connections, as a registry client pulling layers in parallel uses. */
const blobConcurrency = Number(process.env.BENCH_BLOB_CONCURRENCY ?? 2);
const PAGE_SIZE = 50;
/** The API host's wires (the registry host is plain HTTP). */
type ApiProtocol = Exclude<Protocol, "http">;
const PROTOCOLS: ApiProtocol[] = ["grpc", "connect-h1", "connect-h2", "rest"];
const PING: RpcCase = { method: PingService.method.ping, request: {}, restPath: "/ping/v2/ping" };

/** BENCH_ONLY's entries: a label prefix and, optionally, a protocol. Empty means every figure. */
const only = (process.env.BENCH_ONLY ?? "")
  .split(",")
  .map((entry) => entry.trim().toLowerCase())
  .filter(Boolean)
  .map((entry) => {
    const [label, protocol] = entry.split("@");
    return { label, protocol };
  });
const selected = (label: string, protocol: string) =>
  only.length === 0 || only.some((o) => label.toLowerCase().startsWith(o.label) && (o.protocol === undefined || o.protocol === protocol));
const selectedLabel = (label: string) => only.length === 0 || only.some((o) => label.toLowerCase().startsWith(o.label));

/**
 * Issue 16's goals: the most server CPU per call a figure may cost, as a multiple of its
 * same-run baseline's (x CPU); and, for Tag History, its p99 in ms.
 */
const GOALS: Array<{ label: string; protocol: Protocol; xCpu: number; p99Ms?: number }> = [
  { label: "GetGroup", protocol: "grpc", xCpu: 3 },
  { label: "GetGroup", protocol: "rest", xCpu: 5 },
  { label: "ListGroups", protocol: "grpc", xCpu: 8 },
  { label: "Tag History", protocol: "http", xCpu: 8, p99Ms: 50 },
  { label: "Manifest by tag", protocol: "http", xCpu: 3 },
];
const goalOf = (figure: Figure) => GOALS.find((g) => figure.label.startsWith(g.label) && g.protocol === figure.protocol);
/** The goal's text and whether the measured figure misses it; undefined for a figure without a goal. */
function goalCheck(row: Row, results: Results): { text: string; missed: boolean } | undefined {
  const goal = goalOf(row.figure);
  if (!goal) return undefined;
  const f = results.get(row.figure);
  const x = ratio(f?.serverCpuUs, results.get(row.baseline)?.serverCpuUs);
  const p99 = f?.result?.p99;
  const missed = x === undefined || Number.isNaN(x) || x > goal.xCpu || (goal.p99Ms !== undefined && (p99 === undefined || p99 >= goal.p99Ms));
  return { text: `<= ${goal.xCpu}x${goal.p99Ms === undefined ? "" : `, p99 < ${goal.p99Ms} ms`}`, missed };
}

const fixed = (n: number | undefined, digits: number) => (n === undefined || Number.isNaN(n) ? "-" : n.toFixed(digits));
const ratio = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? undefined : a / b);
/** Megabytes (10^6 bytes) per second of a figure whose every call moves `bytesPerCall` bytes. */
const mbps = (result: LoadResult | undefined, bytesPerCall: number | undefined) =>
  result === undefined || bytesPerCall === undefined ? undefined : (result.rps * bytesPerCall) / 1e6;

interface Started<Ready extends ReadyMessage> {
  child: ChildProcess;
  ready: Ready;
}

/** Forks `bench/servers/<file>` and resolves with its ready message; rejects if it exits first. */
function startServer<Ready extends ReadyMessage>(file: string, args: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<Started<Ready>> {
  const profile = file === "platform.ts" && process.env.BENCH_PROFILE ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];
  const child = fork(new URL(`./servers/${file}`, import.meta.url), args, {
    // The servers run src/ and gen/ as compiled into dist/, as `serve` does (compiled-sources.mjs).
    execArgv: ["--import", "tsx", "--import", new URL("./compiled-sources.mjs", import.meta.url).href, ...profile],
    env: { ...process.env, ...env },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  return new Promise((resolve, reject) => {
    child.once("message", (ready) => resolve({ child, ready: ready as Ready }));
    child.once("exit", (code) => reject(new Error(`bench server ${file} ${args.join(" ")} exited with ${code} before listening`)));
  });
}

/** One figure: an RPC on one server over one protocol. */
interface Figure {
  label: string;
  protocol: Protocol;
  /** Which server: "platform" or the baseline's name. */
  serverName: string;
  server: ChildProcess;
  port: number;
  rpc: RpcCase;
  /** When set, gives the RpcCase to use instead of `rpc`, called before each warm-up and measurement (for a fresh short-lived credential). */
  prepare?: () => Promise<RpcCase>;
  /** Returns what is wrong with a response (as proto JSON), or undefined. */
  check(response: JsonObject): string | undefined;
  /** Calls in flight, when not `load.concurrency`. */
  concurrency?: number;
  /** The response body's size, when the figure is a transfer (reported in MB/s). */
  bytesPerCall?: number;
}

interface Measured {
  result?: LoadResult;
  /** CPU time per recorded call, microseconds: the server process's and this (client) process's. */
  serverCpuUs?: number;
  clientCpuUs?: number;
  /** Why the figure was not timed (the verification call failed or returned the wrong thing). */
  problem?: string;
}

/** The CPU time `server` has used so far, microseconds; NaN when it has exited. */
function serverCpu(server: ChildProcess): Promise<number> {
  if (!server.connected) return Promise.resolve(NaN);
  return new Promise((resolve) => {
    const done = (micros: number) => {
      server.off("message", onReport);
      server.off("exit", onExit);
      resolve(micros);
    };
    const onReport = (report: CpuReport) => done(report.cpuMicros);
    const onExit = () => done(NaN);
    server.on("message", onReport);
    server.on("exit", onExit);
    server.send("cpu");
  });
}

/** Runs the load without recording anything, to warm up the server and the client. */
async function warm(figure: Figure): Promise<void> {
  const client = clientFor(figure.protocol, figure.port);
  try {
    const rpc = figure.prepare ? await figure.prepare() : figure.rpc;
    await runLoad(client.bind(rpc).call, { ...load, concurrency: figure.concurrency ?? load.concurrency, warmupMs: prewarmMs, durationMs: 0 });
  } catch {
    // The measurement verifies (and flags) the figure.
  } finally {
    client.close();
  }
}

/** Verifies one response, then runs the load; a fresh client per figure. */
async function measure(figure: Figure): Promise<Measured> {
  process.stderr.write(`  ${figure.label} over ${figure.protocol} on ${figure.serverName} ... `);
  const client = clientFor(figure.protocol, figure.port);
  try {
    let endpoint: ReturnType<typeof client.bind> | undefined;
    let problem: string | undefined;
    try {
      endpoint = client.bind(figure.prepare ? await figure.prepare() : figure.rpc);
      problem = figure.check(endpoint.json(await (endpoint.verify ?? endpoint.call)()) as JsonObject);
    } catch (error) {
      problem = `verification call failed: ${(error as Error).message}`;
    }
    if (problem || !endpoint) {
      process.stderr.write(`NOT VERIFIED: ${problem}\n`);
      return { problem };
    }
    let atStart: { client: number; server: Promise<number> } | undefined;
    const result = await runLoad(endpoint.call, {
      ...load,
      concurrency: figure.concurrency ?? load.concurrency,
      onRecordStart: () => (atStart = { client: cpuMicros(), server: serverCpu(figure.server) }),
    });
    const clientEnd = cpuMicros();
    const serverEnd = await serverCpu(figure.server);
    const calls = result.ok + result.errors;
    const serverCpuUs = atStart ? (serverEnd - (await atStart.server)) / calls : undefined;
    const clientCpuUs = atStart ? (clientEnd - atStart.client) / calls : undefined;
    const transfer = figure.bytesPerCall === undefined ? "" : ` (${fixed(mbps(result, figure.bytesPerCall), 0)} MB/s)`;
    process.stderr.write(
      `${Math.round(result.rps)} req/s${transfer}, CPU per call: server ${fixed(serverCpuUs, 0)} us, client ${fixed(clientCpuUs, 0)} us` +
        `${result.errors ? `, ${result.errors} ERRORS: ${result.errorSamples.join(" | ")}` : ""}\n`,
    );
    return { result, serverCpuUs, clientCpuUs };
  } finally {
    client.close();
  }
}

const isPong = (json: JsonObject) => (json.response === "pong" ? undefined : `expected {"response":"pong"}, got ${JSON.stringify(json)}`);

/**
 * The figures of the platform server: each RPC over each protocol, grouped by protocol; and rows
 * comparing each protocol's ListAdvisories page with its ListGroups page.
 */
function platformFigures({ child: server, ready }: Started<PlatformReady>): { figures: Array<Figure & { protocol: ApiProtocol }>; versus: Row[] } {
  const on = { serverName: "platform", server, port: ready.port };
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
    const groups = json.groups as JsonValue[] | undefined;
    const total = String(json.totalCount);
    if (groups?.length === PAGE_SIZE && total === String(ready.childCount) && typeof json.nextPageToken === "string") return undefined;
    return `expected ${PAGE_SIZE} groups, totalCount "${ready.childCount}" and a next page token; got ${groups?.length} groups, totalCount ${total}`;
  };
  const { deep } = ready;
  const getIdentity: RpcCase = {
    method: IdentitiesService.method.getIdentity,
    request: { uid: deep.identityUid },
    restPath: `/iam/v2/identities/${deep.identityUid}`,
    token: deep.token,
  };
  const listBindings: RpcCase = {
    method: RoleBindingsService.method.listRoleBindings,
    request: { pageSize: PAGE_SIZE },
    restPath: `/iam/v2/roleBindings?page_size=${PAGE_SIZE}`,
    token: deep.token,
  };
  const isIdentity = (json: JsonObject) => (json.uid === deep.identityUid ? undefined : `expected identity ${deep.identityUid}, got ${JSON.stringify(json).slice(0, 200)}`);
  const isBindingPage = (json: JsonObject) => {
    const bindings = json.roleBindings as JsonValue[] | undefined;
    const want = Math.min(PAGE_SIZE, deep.visibleBindings);
    if (bindings?.length === want && String(json.totalCount) === String(deep.visibleBindings)) return undefined;
    return `expected ${want} bindings and totalCount "${deep.visibleBindings}"; got ${bindings?.length} and ${String(json.totalCount)}`;
  };
  const tree = `${deep.groupCount} groups, ${deep.bindingCount} bindings`;
  const { registry } = ready;
  const listTags: RpcCase = {
    method: TagsService.method.listTags,
    request: { uidp: { childrenOf: registry.repoUid }, pageSize: PAGE_SIZE },
    restPath: `/registry/v2/tags?uidp.children_of=${encodeURIComponent(registry.repoUid)}&page_size=${PAGE_SIZE}`,
    token: ready.token,
  };
  const isTagPage = (json: JsonObject) => {
    const tags = json.tags as JsonValue[] | undefined;
    const total = String(json.totalCount);
    if (tags?.length === PAGE_SIZE && total === String(registry.tagCount) && typeof json.nextPageToken === "string") return undefined;
    return `expected ${PAGE_SIZE} tags, totalCount "${registry.tagCount}" and a next page token; got ${tags?.length} tags, totalCount ${total}`;
  };
  const { advisories } = ready;
  const listAdvisories: RpcCase = {
    method: AdvisoriesService.method.listAdvisories,
    request: { artifactNames: advisories.names, pageSize: PAGE_SIZE },
    restPath: `/vulnerabilities/v2/advisories?${advisories.names.map((name) => `artifactNames=${encodeURIComponent(name)}`).join("&")}&page_size=${PAGE_SIZE}`,
    token: ready.token,
  };
  const advisoryPage = Math.min(PAGE_SIZE, advisories.matching);
  const isAdvisoryPage = (json: JsonObject) => {
    const page = (json.advisories ?? []) as JsonObject[];
    const total = String(json.totalCount);
    const others = page.filter((a) => !advisories.names.includes(a.artifactName as string));
    const token = advisories.matching > PAGE_SIZE ? typeof json.nextPageToken === "string" : json.nextPageToken === undefined;
    if (page.length === advisoryPage && total === String(advisories.matching) && token && others.length === 0) return undefined;
    return (
      `expected ${advisoryPage} advisories of ${advisories.names.join(", ")}, totalCount "${advisories.matching}"` +
      `${advisories.matching > PAGE_SIZE ? " and a next page token" : ""}; got ${page.length} advisories (${others.length} of other artifacts), totalCount ${total}`
    );
  };
  const filtered = `ListAdvisories (${advisories.names.length} artifact_names, ${advisoryPage} of ${advisories.matching} in ${advisories.advisories})`;
  const { libraries } = ready;
  const listArtifacts: RpcCase = {
    method: ArtifactsService.method.listArtifacts,
    request: { ecosystems: QUERY_ECOSYSTEMS, query: libraries.query, pageSize: PAGE_SIZE },
    restPath: `/libraries/v2/artifacts?${QUERY_ECOSYSTEMS.map((e) => `ecosystems=${e}`).join("&")}&query=${encodeURIComponent(libraries.query)}&page_size=${PAGE_SIZE}`,
    token: ready.token,
  };
  const artifactPage = Math.min(PAGE_SIZE, libraries.matching);
  const isArtifactPage = (json: JsonObject) => {
    const page = (json.artifacts ?? []) as JsonObject[];
    const total = String(json.totalCount);
    const others = page.filter((a) => !(a.name as string).toLowerCase().includes(libraries.query));
    if (page.length === artifactPage && total === String(libraries.matching) && others.length === 0) return undefined;
    return `expected ${artifactPage} artifacts with "${libraries.query}" in their names and totalCount "${libraries.matching}"; got ${page.length} (${others.length} others), totalCount ${total}`;
  };
  const searched = `ListArtifacts (query "${libraries.query}", ${artifactPage} of ${libraries.matching} in ${libraries.artifacts})`;
  const byProtocol = PROTOCOLS.map((protocol) => {
    const groups = { ...on, label: `ListGroups (${PAGE_SIZE} of ${ready.childCount})`, protocol, rpc: listGroups, check: isPage };
    const page = { ...on, label: filtered, protocol, rpc: listAdvisories, check: isAdvisoryPage };
    return {
      figures: [
        { ...on, label: "Ping", protocol, rpc: PING, check: isPong },
        { ...on, label: "GetGroup", protocol, rpc: getGroup, check: isGroup },
        groups,
        { ...on, label: `GetIdentity (deep caller)`, protocol, rpc: getIdentity, check: isIdentity },
        { ...on, label: `ListRoleBindings (${tree})`, protocol, rpc: listBindings, check: isBindingPage },
        { ...on, label: `ListTags (${PAGE_SIZE} of ${registry.tagCount})`, protocol, rpc: listTags, check: isTagPage },
        page,
        { ...on, label: searched, protocol, rpc: listArtifacts, check: isArtifactPage },
      ],
      versus: { figure: page, baseline: groups },
    };
  });
  return { figures: byProtocol.flatMap((p) => p.figures), versus: byProtocol.map((p) => p.versus) };
}

/**
 * The Tag History read: HISTORY_PATH with a registry token, on the registry
 * host and on the node:http baseline (the same client code, so the same
 * header; the baseline ignores it). Registry tokens live 5 minutes, so each
 * warm-up and measurement first gets a fresh one from `GET /token`, with the
 * owner's platform token for the registry audience.
 */
function historyFigures({ child: server, ready }: Started<PlatformReady>, plain: Started<BaselineReady>): Row {
  const { registry } = ready;
  const rpc: RpcCase = { request: {}, restPath: HISTORY_PATH };
  const prepare = withPullToken(registry, HISTORY_REPOSITORY, rpc);
  const expected = historyBody();
  const isHistory = (json: JsonObject) => {
    const text = JSON.stringify(json);
    if (text === expected) return undefined;
    const history = json.history as JsonValue[] | undefined;
    return `expected the ${HISTORY_ANSWERED} oldest records of the seeded history; got ${history?.length} records: ${text.slice(0, 200)}`;
  };
  const common = { protocol: "http" as const, rpc, prepare, check: isHistory };
  return {
    figure: { ...common, serverName: "registry", server, port: registry.port, label: `Tag History (${HISTORY_ANSWERED} of ${HISTORY_RECORDS} records)` },
    baseline: { ...common, serverName: "node:http", server: plain.child, port: plain.ready.h1Port!, label: `${HISTORY_ANSWERED} records` },
  };
}

/**
 * A `prepare` giving `rpc` a fresh registry token to pull `repository`: `GET /token` on the
 * registry host with the owner's platform token for the registry audience.
 */
function withPullToken(registry: PlatformReady["registry"], repository: string, rpc: RpcCase): () => Promise<RpcCase> {
  return async () => ({ ...rpc, token: await registryToken(registry, `repository:${repository}:pull`) });
}

/** A registry token for `scope`, from the registry host's `/token` with the owner's platform token. */
async function registryToken(registry: PlatformReady["registry"], scope: string): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${registry.port}/token?scope=${encodeURIComponent(scope)}`, { headers: { authorization: `Bearer ${registry.platformToken}` } });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET /token: HTTP ${res.status}: ${text.slice(0, 200)}`);
  return (JSON.parse(text) as { token: string }).token;
}

/** What is wrong with a counted, hashed answer, against the digest, size and headers expected; or undefined. */
function checkBody(json: JsonObject, digest: string, headers: Record<string, string>): string | undefined {
  const got = json as unknown as VerifiedBody;
  const size = Number(headers["content-length"]);
  if (got.status !== 200 || got.bytes !== size || got.digest !== digest) {
    return `expected HTTP 200 with ${size} bytes hashing to ${digest}; got HTTP ${got.status}, ${got.bytes} bytes hashing to ${got.digest}`;
  }
  const wrong = Object.entries(headers).filter(([name, value]) => got.headers[name] !== value);
  if (wrong.length > 0) return `headers differ: ${wrong.map(([name, value]) => `${name}: expected ${value}, got ${got.headers[name]}`).join("; ")}`;
  return undefined;
}

/**
 * The pull figures, on the registry host and on the node:http baseline, each with a fresh
 * registry token to pull PULL_REPOSITORY (as Tag History): the image's 50 MB layer blob
 * (BENCH_BLOB_CONCURRENCY pulls in flight, each body streamed and counted, not kept), and
 * its manifest by tag. Each is verified first by the body's digest, size and headers.
 */
function pullFigures({ child: server, ready }: Started<PlatformReady>, plain: Started<BaselineReady>): Row[] {
  const { registry } = ready;
  const { layer, manifest } = registry.image;
  const blobRpc: RpcCase = { request: {}, restPath: blobPath(layer.digest), body: "count" };
  const blob = {
    protocol: "http" as const,
    rpc: blobRpc,
    prepare: withPullToken(registry, PULL_REPOSITORY, blobRpc),
    check: (json: JsonObject) => checkBody(json, layer.digest, blobHeaders(layer.digest, layer.size)),
    concurrency: blobConcurrency,
    bytesPerCall: layer.size,
  };
  const manifestRpc: RpcCase = { request: {}, restPath: MANIFEST_PATH, body: "count" };
  const image = {
    protocol: "http" as const,
    rpc: manifestRpc,
    prepare: withPullToken(registry, PULL_REPOSITORY, manifestRpc),
    check: (json: JsonObject) => checkBody(json, manifest.digest, manifestHeaders(manifest)),
  };
  const megabytes = `${LAYER_FILE_BYTES / 1e6} MB`;
  const onRegistry = { serverName: "registry", server, port: registry.port };
  const onPlain = { serverName: "node:http", server: plain.child, port: plain.ready.h1Port! };
  return [
    {
      figure: { ...blob, ...onRegistry, label: `Blob pull (${megabytes}, ${blobConcurrency} in flight)` },
      baseline: { ...blob, ...onPlain, label: "same file streamed" },
    },
    {
      figure: { ...image, ...onRegistry, label: `Manifest by tag (${Buffer.byteLength(manifest.text)} B)` },
      baseline: { ...image, ...onPlain, label: "same manifest bytes" },
    },
  ];
}

/**
 * Context for the blob figures: `fs.createReadStream` of the layer's file in this process,
 * BENCH_BLOB_CONCURRENCY reads at a time, each streamed to its end and discarded.
 */
async function readBlobFile(file: string, size: number): Promise<LoadResult> {
  const read = async () => {
    let bytes = 0;
    for await (const chunk of createReadStream(file)) bytes += (chunk as Buffer).length;
    if (bytes !== size) throw new Error(`read ${bytes} bytes of ${size}`);
  };
  return runLoad(read, { concurrency: blobConcurrency, warmupMs: load.warmupMs, durationMs: load.durationMs / 2 });
}

/** Of two rounds of a figure: one that failed if any did, else the faster. */
function better(kept: Measured | undefined, next: Measured): Measured {
  if (!kept) return next;
  const failed = (m: Measured) => Boolean(m.problem || m.result?.errors);
  if (failed(kept) || failed(next)) return failed(kept) ? kept : next;
  return (next.result?.rps ?? 0) > (kept.result?.rps ?? 0) ? next : kept;
}

/** A line of the report: a figure and the baseline it is compared with. */
interface Row {
  figure: Figure;
  baseline: Figure;
}

type Results = Map<Figure, Measured>;

const goalText = (goal: { text: string; missed: boolean } | undefined) => (goal === undefined ? "" : `${goal.text}${goal.missed ? " MISSED" : ""}`);

/** A Markdown table: each figure, its baseline, and figure / baseline ("x"). */
function table(rows: Row[], results: Results): string {
  const header = ["RPC", "protocol", "req/s", "MB/s", "p50 ms", "p99 ms", "CPU us", "baseline", "req/s", "MB/s", "p50 ms", "p99 ms", "CPU us", "x req/s", "x p50", "x p99", "x CPU", "goal", "errors"];
  const textColumns = new Set([0, 1, 7, 17]);
  const lines = rows.map((row) => {
    const figure = results.get(row.figure) ?? {};
    const baseline = results.get(row.baseline) ?? {};
    const f = figure.result;
    const b = baseline.result;
    return [
      row.figure.label,
      row.figure.protocol,
      fixed(f?.rps, 0),
      fixed(mbps(f, row.figure.bytesPerCall), 0),
      fixed(f?.p50, 2),
      fixed(f?.p99, 2),
      fixed(figure.serverCpuUs, 0),
      `${row.baseline.label} on ${row.baseline.serverName}`,
      fixed(b?.rps, 0),
      fixed(mbps(b, row.baseline.bytesPerCall), 0),
      fixed(b?.p50, 2),
      fixed(b?.p99, 2),
      fixed(baseline.serverCpuUs, 0),
      fixed(ratio(f?.rps, b?.rps), 2),
      fixed(ratio(f?.p50, b?.p50), 2),
      fixed(ratio(f?.p99, b?.p99), 2),
      fixed(ratio(figure.serverCpuUs, baseline.serverCpuUs), 2),
      goalText(goalCheck(row, results)),
      figure.problem ? "NOT VERIFIED" : f?.errors ? `${f.errors} !` : "0",
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const format = (cells: string[]) => `| ${cells.map((c, i) => (textColumns.has(i) ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(" | ")} |`;
  const rule = `|${widths.map((w, i) => `-${"-".repeat(w)}${textColumns.has(i) ? "-" : ":"}`).join("|")}|`;
  return [format(header), rule, ...lines.map(format)].join("\n");
}

/** A Markdown table of the import figures: records/s and CPU per record, each next to its parse-only baseline. */
function importTable(rows: Array<{ label: string; figure: TimedPass; baseline: TimedPass; baselineLabel: string }>): string {
  const perSecond = (p: TimedPass) => (p.records * 1000) / p.ms;
  const cpuPerRecord = (p: TimedPass) => p.cpuUs / p.records;
  const header = ["import", "records/s", "CPU us/record", "baseline", "records/s", "CPU us/record", "x records/s", "x CPU"];
  const textColumns = new Set([0, 3]);
  const lines = rows.map(({ label, figure, baseline, baselineLabel }) => [
    label,
    fixed(perSecond(figure), 0),
    fixed(cpuPerRecord(figure), 0),
    baselineLabel,
    fixed(perSecond(baseline), 0),
    fixed(cpuPerRecord(baseline), 0),
    fixed(ratio(perSecond(figure), perSecond(baseline)), 2),
    fixed(ratio(cpuPerRecord(figure), cpuPerRecord(baseline)), 2),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const format = (cells: string[]) => `| ${cells.map((c, i) => (textColumns.has(i) ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(" | ")} |`;
  const rule = `|${widths.map((w, i) => `-${"-".repeat(w)}${textColumns.has(i) ? "-" : ":"}`).join("|")}|`;
  return [format(header), rule, ...lines.map(format)].join("\n");
}

/** The import rows: the feed's files (this process), and the seeding of the platform server's advisories (its process). */
function importRows(files: ImportFigures, seeded: PlatformReady["advisories"]) {
  return [
    { label: `advisories import of ${files.files} RustSec files`, figure: files.import, baseline: files.parse, baselineLabel: "readFile + JSON.parse the same files" },
    {
      label: `${seeded.import.records} derived records into the server's store (${seeded.advisories} advisories)`,
      figure: seeded.import,
      baseline: seeded.parse,
      baselineLabel: "JSON.parse the same bytes",
    },
  ];
}

async function main() {
  const started = performance.now();
  process.stderr.write(
    `bench: ${availableParallelism()} cores, Node ${process.version}, ${load.concurrency} calls in flight, ` +
      `${load.warmupMs / 1000}s warm-up + ${load.durationMs / 1000}s recorded per figure, best of ${rounds} rounds; ` +
      `store ${process.env.BENCH_DB === "postgres" ? "PostgreSQL" : "SQLite"}; load average ${loadavg()[0].toFixed(2)}\n`,
  );
  // Before any server starts: the import has the machine to itself.
  const withImport = selectedLabel("import");
  if (withImport) process.stderr.write(`  import of ${OSV_DIR}\n`);
  const imports = withImport ? await measureImport(OSV_DIR, { prewarmMs, durationMs: load.durationMs, rounds }) : undefined;
  // Figures left out by BENCH_ONLY need no large advisory store or library index.
  const seedSizes = {
    ...(selectedLabel("ListAdvisories") ? {} : { BENCH_ADVISORIES: "1" }),
    ...(selectedLabel("ListArtifacts") ? {} : { BENCH_ARTIFACTS: "100" }),
  };
  const [platform, connect, grpcJs] = await Promise.all([
    startServer<PlatformReady>("platform.ts", [], seedSizes),
    startServer<BaselineReady>("baselines.ts", ["connect"]),
    startServer<BaselineReady>("baselines.ts", ["grpc"]),
  ]);
  // The plain node:http baseline serves the image the platform server seeded: its manifest and its layer's file.
  const plain = await startServer<BaselineReady>("baselines.ts", ["http", JSON.stringify(platform.ready.registry.image)]);
  const servers = [platform, connect, grpcJs, plain];
  try {
    const { registry } = platform.ready;
    process.stderr.write(
      `  seeded in ${Math.round(platform.ready.seedMs)} ms, of which ${Math.round(registry.seedMs)} ms the registry ` +
        `(${registry.tagCount} tags, a tag with ${HISTORY_RECORDS} history records; ${Math.round(registry.imageSeedMs)} ms ` +
        `the image ${PULL_REPOSITORY}:${PULL_TAG} with a ${registry.image.layer.size}-byte layer)\n`,
    );
    const { advisories } = platform.ready;
    process.stderr.write(
      `  and ${Math.round(advisories.import.ms)} ms importing ${advisories.import.records} records (${advisories.advisories} advisories) ` +
        `derived from the feed; JSON.parse of the same bytes: ${Math.round(advisories.parse.ms)} ms\n`,
    );
    const { libraries } = platform.ready;
    process.stderr.write(`  and ${Math.round(libraries.seedMs)} ms importing ${libraries.artifacts} artifacts derived from the shipped library metadata\n`);
    const baselines: Record<ApiProtocol, Figure> = {
      grpc: { serverName: "grpc-js", server: grpcJs.child, port: grpcJs.ready.h2Port!, label: "Ping", protocol: "grpc", rpc: PING, check: isPong },
      "connect-h1": { serverName: "connect-node", server: connect.child, port: connect.ready.h1Port!, label: "Ping", protocol: "connect-h1", rpc: PING, check: isPong },
      "connect-h2": { serverName: "connect-node", server: connect.child, port: connect.ready.h2Port!, label: "Ping", protocol: "connect-h2", rpc: PING, check: isPong },
      rest: { serverName: "node:http", server: plain.child, port: plain.ready.h1Port!, label: "Ping", protocol: "rest", rpc: PING, check: isPong },
    };
    // Reference: the bare Connect handler over gRPC, against grpc-js (the framework's own cost).
    const bare: Figure = { ...baselines["connect-h2"], label: "Ping on bare connect-node", protocol: "grpc" };
    const onPlatform = platformFigures(platform);
    const rows: Row[] = [
      ...onPlatform.figures.map((figure) => ({ figure, baseline: baselines[figure.protocol] })),
      { figure: bare, baseline: baselines.grpc },
      historyFigures(platform, plain),
      ...pullFigures(platform, plain),
      ...onPlatform.versus,
    ].filter((row) => selected(row.figure.label, row.figure.protocol));
    // Each protocol's baseline just before its figures; every figure once.
    const order = [...new Set(rows.flatMap((row) => [row.baseline, row.figure]))];
    if (prewarmMs > 0) {
      process.stderr.write(`  warming up: ${order.length} figures, ${prewarmMs / 1000}s each\n`);
      for (const figure of order) await warm(figure);
    }
    const results: Results = new Map();
    for (let round = 1; round <= rounds; round++) {
      process.stderr.write(`  round ${round} of ${rounds}\n`);
      for (const figure of order) results.set(figure, better(results.get(figure), await measure(figure)));
    }
    const { layer } = registry.image;
    const diskRead = selectedLabel("Blob pull") ? await readBlobFile(layer.file, layer.size) : { ok: 0, errors: 0, errorSamples: [], rps: NaN, p50: NaN, p99: NaN };
    const diskLine =
      `Reading the layer's file with fs.createReadStream in the bench process, ${blobConcurrency} at a time: ` +
      `${fixed(mbps(diskRead, layer.size), 0)} MB/s (${fixed(diskRead.rps, 1)} reads/s, p50 ${fixed(diskRead.p50, 2)} ms)` +
      `${diskRead.errors ? `, ${diskRead.errors} ERRORS: ${diskRead.errorSamples.join(" | ")}` : ""}.`;

    const peer = selectedLabel("peer")
      ? await measureRegistryPeer(
          {
            pid: platform.child.pid!,
            base: `http://127.0.0.1:${registry.port}`,
            token: () => registryToken(registry, `repository:${PULL_REPOSITORY}:pull`),
            pushToken: (repository) => registryToken(registry, `repository:${repository}:push,pull`),
          },
          registry.image,
          (line) => process.stderr.write(line),
        )
      : undefined;
    const peerNote = peer?.absent.length ? `Registry peer: ${peer.absent.join(", ")} not installed (Debian packages; the bench installs nothing), so ${peer.rows.length === 0 ? "no peer figure" : "some peer figures are"} left out.` : undefined;

    if (process.argv.includes("--json")) {
      const rowsJson = rows.map(({ figure, baseline }) => {
        const f = results.get(figure) ?? {};
        const b = results.get(baseline) ?? {};
        return {
          rpc: figure.label,
          protocol: figure.protocol,
          ...f,
          mbps: mbps(f.result, figure.bytesPerCall),
          baseline: { server: baseline.serverName, rpc: baseline.label, ...b, mbps: mbps(b.result, baseline.bytesPerCall) },
          ratio: {
            rps: ratio(f.result?.rps, b.result?.rps),
            p50: ratio(f.result?.p50, b.result?.p50),
            p99: ratio(f.result?.p99, b.result?.p99),
            serverCpu: ratio(f.serverCpuUs, b.serverCpuUs),
          },
          goal: goalCheck({ figure, baseline }, results),
        };
      });
      const blobFile = { ...diskRead, mbps: mbps(diskRead, layer.size), concurrency: blobConcurrency };
      const imported = (imports ? importRows(imports, advisories) : []).map(({ label, figure, baseline, baselineLabel }) => ({
        import: label,
        ...figure,
        baseline: { label: baselineLabel, ...baseline },
        ratio: { recordsPerSecond: (figure.records / figure.ms) / (baseline.records / baseline.ms), cpu: (figure.cpuUs / figure.records) / (baseline.cpuUs / baseline.records) },
      }));
      const json = { cores: availableParallelism(), node: process.version, load, blobConcurrency, prewarmMs, rounds, rows: rowsJson, blobFile, imports: imported, syncParse: imports?.syncParse, peer };
      process.stdout.write(`${JSON.stringify(json, null, 2)}\n`);
    } else {
      process.stdout.write(`${table(rows, results)}\n`);
      process.stdout.write(
        `CPU us = server CPU time per call. MB/s = 10^6 bytes/s of response bodies. x = figure / baseline. ` +
          `${load.concurrency} calls in flight (${blobConcurrency} for blob pulls); best of ${rounds} rounds of ${load.durationMs / 1000}s per figure.\n`,
      );
      if (selectedLabel("Blob pull")) process.stdout.write(`${diskLine}\n`);
      process.stdout.write("\n");
      if (peer && peer.rows.length > 0) {
        process.stdout.write(`${peerTable(peer.rows)}\n`);
        process.stdout.write("Against the CNCF distribution registry (docker-registry), same image, pulled by wrk (keep-alive), best of its rounds; CPU us = each server's CPU per request from /proc.\n");
      }
      if (peerNote) process.stdout.write(`${peerNote}\n`);
      process.stdout.write("\n");
    }
    if (imports && !process.argv.includes("--json")) {
      process.stdout.write(`${importTable(importRows(imports, advisories))}\n`);
      process.stdout.write(
        `CPU us/record = the importing process's CPU time per record (the store's writes included). x = figure / baseline. ` +
          `Files: best of ${rounds} rounds of ${load.durationMs / 1000}s each (whole passes over the folder, each import into a fresh store); ` +
          `derived records: one pass each, while the server seeded its store, the time spent deriving them left out.\n`,
      );
      const sync = imports.syncParse;
      process.stdout.write(`Reading the same files with readFileSync + JSON.parse: ${fixed((sync.records * 1000) / sync.ms, 0)} records/s, ${fixed(sync.cpuUs / sync.records, 0)} us of CPU per record.\n`);
    }
    const failed = order.filter((figure) => results.get(figure)?.problem || results.get(figure)?.result?.errors);
    if (diskRead.errors) process.stderr.write(`FLAGGED reading the layer's file: ${diskRead.errorSamples.join(" | ")}\n`);
    for (const figure of failed) {
      const { problem, result } = results.get(figure)!;
      process.stderr.write(`FLAGGED ${figure.label} over ${figure.protocol} on ${figure.serverName}: ${problem ?? result?.errorSamples.join(" | ")}\n`);
    }
    process.stderr.write(`bench: done in ${((performance.now() - started) / 1000).toFixed(1)} s; load average ${loadavg()[0].toFixed(2)}\n`);
    process.exitCode = failed.length > 0 || diskRead.errors > 0 ? 1 : 0;
  } finally {
    const exited = servers.map(({ child }) => new Promise((resolve) => child.once("exit", resolve)));
    for (const { child } of servers) child.disconnect();
    await Promise.all(exited);
  }
}

await main();
// Clients may keep idle sockets (HTTP/2 sessions) open; the bench is over.
process.exit();
