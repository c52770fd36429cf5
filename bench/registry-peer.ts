import { execFile, spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { createReadStream, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { MEDIA_TYPE } from "../src/domains/registry/manifest.js";
import { blobPath, MANIFEST_PATH, PULL_REPOSITORY, randomTar, type SeededImage } from "./servers/oci-image.js";

/**
 * The registry's data path next to the registry most people would run instead: the CNCF
 * distribution registry (Debian's `docker-registry`), on the same machine, serving the same image
 * (pushed to it here), pulled by the same client (`wrk`, keep-alive, which costs less than either
 * server), alternating ours and theirs, `BENCH_PEER_ROUNDS` rounds (default 3) of
 * `BENCH_PEER_SECONDS` (default 3) per figure, best round of each. Ours with a registry token,
 * distribution without authentication. Server CPU per request from /proc (all of each server's
 * threads; ours is the platform child, whose API host is idle meanwhile). And a skopeo push of a
 * five-layer image (15.5 MB) to a new repo of each. Nothing is installed: a missing program is said
 * and its figures left out.
 */

const run = promisify(execFile);
const seconds = Number(process.env.BENCH_PEER_SECONDS ?? 3);
const rounds = Number(process.env.BENCH_PEER_ROUNDS ?? 3);
const TICKS_PER_SECOND = 100;

interface Side {
  name: "ours" | "distribution";
  pid: number;
  base: string;
  /** A registry token to pull the seeded image (none: no authentication). */
  token?: () => Promise<string>;
  /** A registry token to push to `repository` (none: no authentication). */
  pushToken?: (repository: string) => Promise<string>;
  repository: string;
}

interface Measured {
  rps: number;
  cpuUs: number;
  errors: number;
}

export interface PeerRow {
  label: string;
  unit: "req/s" | "ms";
  ours?: Measured | { ms: number };
  theirs?: Measured | { ms: number };
}

async function onPath(program: string): Promise<boolean> {
  return run("sh", ["-c", `command -v ${program}`]).then(
    () => true,
    () => false,
  );
}

/** User plus system CPU time of a process and all its threads, microseconds. */
function cpuUsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / TICKS_PER_SECOND;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on("error", reject);
  });
}

async function startDistribution(dir: string): Promise<{ child: ChildProcess; base: string }> {
  const port = await freePort();
  const config = join(dir, "config.yml");
  writeFileSync(
    config,
    `version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: ${join(dir, "data")}\n  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:${port}\n`,
  );
  const child = spawn("docker-registry", ["serve", config], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null) throw new Error(`docker-registry exited: ${stderr}`);
    const up = await fetch(`${base}/v2/`).then((r) => r.status === 200, () => false);
    if (up) return { child, base };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`docker-registry did not answer: ${stderr}`);
}

/** Uploads a blob to distribution: POST, then PUT with the bytes and the digest. */
async function pushBlob(base: string, repository: string, digest: string, body: Buffer | string): Promise<void> {
  const start = await fetch(`${base}/v2/${repository}/blobs/uploads/`, { method: "POST" });
  const location = new URL(start.headers.get("location")!, base);
  location.searchParams.set("digest", digest);
  const bytes = typeof body === "string" ? createReadStream(body) : body;
  const put = await fetch(location, { method: "PUT", body: bytes as never, duplex: "half", headers: { "content-type": "application/octet-stream" } } as RequestInit);
  if (put.status !== 201) throw new Error(`distribution: blob PUT ${put.status}: ${await put.text()}`);
}

/** Copies the seeded image to distribution, byte for byte: layer (its file), config (read from ours), manifest under its tag. */
async function seedDistribution(base: string, image: SeededImage, ours: Side): Promise<void> {
  const manifest = JSON.parse(image.manifest.text) as { config: { digest: string } };
  const config = await fetch(`${ours.base}${blobPath(manifest.config.digest)}`, { headers: { authorization: `Bearer ${await ours.token!()}` } });
  await pushBlob(base, PULL_REPOSITORY, manifest.config.digest, Buffer.from(await config.arrayBuffer()));
  await pushBlob(base, PULL_REPOSITORY, image.layer.digest, image.layer.file);
  const put = await fetch(`${base}${MANIFEST_PATH}`, { method: "PUT", body: image.manifest.text, headers: { "content-type": image.manifest.mediaType } });
  if (put.status !== 201) throw new Error(`distribution: manifest PUT ${put.status}: ${await put.text()}`);
}

/** One wrk run (GET) against `side`, with the server's CPU over it. */
async function wrk(side: Side, path: string, connections: number, headers: Record<string, string>): Promise<Measured> {
  const args = ["-t1", `-c${connections}`, `-d${seconds}s`];
  if (side.token) args.push("-H", `Authorization: Bearer ${await side.token()}`);
  for (const [name, value] of Object.entries(headers)) args.push("-H", `${name}: ${value}`);
  const before = cpuUsOf(side.pid);
  const { stdout } = await run("wrk", [...args, `${side.base}${path}`], { maxBuffer: 1 << 20 });
  const cpu = cpuUsOf(side.pid) - before;
  const requests = Number(/(\d+) requests in/.exec(stdout)?.[1] ?? 0);
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1] ?? 0);
  const errors = Number(/Non-2xx or 3xx responses: (\d+)/.exec(stdout)?.[1] ?? 0) + Number(/Socket errors: .*?(\d+)/.exec(stdout)?.[1] ?? 0);
  return { rps, cpuUs: requests === 0 ? NaN : cpu / requests, errors };
}

/**
 * HEAD requests, `connections` at a time over keep-alive, for `seconds` (wrk cannot: its parser
 * waits for the body a HEAD answer's Content-Length announces). The client is this process, so
 * the rate is the client's as much as the server's; the CPU per request is the server's own.
 */
async function heads(side: Side, path: string, connections: number): Promise<Measured> {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const url = new URL(`${side.base}${path}`);
  const headers = side.token ? { authorization: `Bearer ${await side.token()}` } : {};
  const one = () =>
    new Promise<number>((resolve, reject) => {
      const req = request(url, { method: "HEAD", agent, headers }, (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      });
      req.on("error", reject);
      req.end();
    });
  const before = cpuUsOf(side.pid);
  const until = performance.now() + seconds * 1000;
  let [ok, errors] = [0, 0];
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < until) {
        if ((await one().catch(() => 0)) === 200) ok++;
        else errors++;
      }
    }),
  );
  const cpu = cpuUsOf(side.pid) - before;
  agent.destroy();
  return { rps: (ok + errors) / seconds, cpuUs: cpu / Math.max(1, ok + errors), errors };
}

/**
 * A five-layer OCI image layout (8, 4, 2, 1 and 0.5 MB of random bytes), tag `v1`. Each round
 * pushes a new one: skopeo remembers where it pushed a blob (its blob info cache) and would mount
 * it from there instead of uploading it, which measures no push.
 */
function multiLayerLayout(dir: string, name: string): string {
  const layout = join(dir, name);
  const blobs = join(layout, "blobs", "sha256");
  mkdirSync(blobs, { recursive: true });
  const write = (bytes: Buffer) => {
    const hex = createHash("sha256").update(bytes).digest("hex");
    writeFileSync(join(blobs, hex), bytes);
    return { digest: `sha256:${hex}`, size: bytes.length };
  };
  const layers = [8e6, 4e6, 2e6, 1e6, 5e5].map((size, i) => ({ mediaType: "application/vnd.oci.image.layer.v1.tar", ...write(randomTar(`layer-${i}.bin`, size)) }));
  const config = write(Buffer.from(JSON.stringify({ architecture: "amd64", os: "linux", config: {}, rootfs: { type: "layers", diff_ids: layers.map((l) => l.digest) } })));
  const manifest = write(Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: MEDIA_TYPE.ociManifest, config: { mediaType: "application/vnd.oci.image.config.v1+json", ...config }, layers })));
  writeFileSync(join(layout, "oci-layout"), JSON.stringify({ imageLayoutVersion: "1.0.0" }));
  writeFileSync(join(layout, "index.json"), JSON.stringify({ schemaVersion: 2, manifests: [{ mediaType: MEDIA_TYPE.ociManifest, ...manifest, annotations: { "org.opencontainers.image.ref.name": "v1" } }] }));
  return layout;
}

async function skopeoPush(side: Side, layout: string, repository: string): Promise<number> {
  const host = new URL(side.base).host;
  // The token itself: skopeo need not reach the token realm the server names (its public URL).
  const creds = side.pushToken ? ["--dest-registry-token", await side.pushToken(repository)] : [];
  const started = performance.now();
  await run("skopeo", ["copy", "-q", "--dest-tls-verify=false", ...creds, `oci:${layout}:v1`, `docker://${host}/${repository}:v1`]);
  return performance.now() - started;
}

const best = (a: Measured | undefined, b: Measured): Measured => (!a || a.errors > 0 ? b : b.errors === 0 && b.rps > a.rps ? b : a);

/**
 * Runs the peer figures against our registry (`ours`: the platform child's pid, its registry
 * host, a pull token maker and push credentials) and a distribution registry started here.
 * Returns the rows, or the reason there are none.
 */
export async function measureRegistryPeer(ours: Omit<Side, "name" | "repository">, image: SeededImage, log: (line: string) => void): Promise<{ rows: PeerRow[]; absent: string[] }> {
  const absent: string[] = [];
  for (const program of ["docker-registry", "wrk", "skopeo"]) if (!(await onPath(program))) absent.push(program);
  if (absent.includes("docker-registry")) return { rows: [], absent };
  const dir = mkdtempSync(join(tmpdir(), "platform-api-bench-peer-"));
  const { child, base } = await startDistribution(dir);
  try {
    const sides: Side[] = [
      { ...ours, name: "ours", repository: PULL_REPOSITORY },
      { name: "distribution", pid: child.pid!, base, repository: PULL_REPOSITORY },
    ];
    await seedDistribution(base, image, sides[0]);
    log(`  registry peer: distribution (docker-registry) on ${base}, the image copied to it (${(statSync(image.layer.file).size / 1e6).toFixed(0)} MB layer)\n`);
    const rows: PeerRow[] = [];
    if (!absent.includes("wrk")) {
      const manifestAccept = { accept: image.manifest.mediaType };
      const figures = [
        { label: "Peer manifest GET by tag (10 connections)", measure: (side: Side) => wrk(side, MANIFEST_PATH, 10, manifestAccept) },
        { label: `Peer blob GET (${(image.layer.size / 1e6).toFixed(0)} MB, 2 connections)`, measure: (side: Side) => wrk(side, blobPath(image.layer.digest), 2, {}) },
        { label: "Peer blob HEAD (10 at a time, a Node client)", measure: (side: Side) => heads(side, blobPath(image.layer.digest), 10) },
      ];
      for (const figure of figures) {
        let [mine, theirs]: [Measured | undefined, Measured | undefined] = [undefined, undefined];
        for (let round = 0; round < rounds; round++) {
          mine = best(mine, await figure.measure(sides[0]));
          theirs = best(theirs, await figure.measure(sides[1]));
        }
        rows.push({ label: figure.label, unit: "req/s", ours: mine, theirs });
      }
    }
    if (!absent.includes("skopeo")) {
      let [mine, theirs] = [Infinity, Infinity];
      // A warm-up push to each, not counted, as every figure has its warm-up: a fresh server's first
      // pushes run its upload path before the JIT has compiled it.
      const organization = PULL_REPOSITORY.split("/")[0];
      const warmUp = multiLayerLayout(dir, "layout-warm-up");
      for (const side of sides) await skopeoPush(side, warmUp, `${organization}/peer-push-warm-up-${Date.now().toString(36)}`);
      for (let round = 0; round < rounds; round++) {
        const layout = multiLayerLayout(dir, `layout-${round}`);
        const repository = `${organization}/peer-push-${round}-${Date.now().toString(36)}`;
        // Who pushes first alternates: the second push of a round finds skopeo's files warmer.
        let a: number;
        let b: number;
        if (round % 2 === 0) {
          a = await skopeoPush(sides[0], layout, repository);
          b = await skopeoPush(sides[1], layout, repository);
        } else {
          b = await skopeoPush(sides[1], layout, repository);
          a = await skopeoPush(sides[0], layout, repository);
        }
        log(`  registry peer: skopeo push round ${round + 1}: ours ${a.toFixed(0)} ms, distribution ${b.toFixed(0)} ms\n`);
        [mine, theirs] = [Math.min(mine, a), Math.min(theirs, b)];
      }
      rows.push({ label: "Peer skopeo push (5 layers, 15.5 MB, new repo)", unit: "ms", ours: { ms: mine }, theirs: { ms: theirs } });
    }
    return { rows, absent };
  } finally {
    child.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The rows as a table: each figure on both, and ours over distribution. */
export function peerTable(rows: PeerRow[]): string {
  const f = (n: number | undefined, d: number) => (n === undefined || Number.isNaN(n) ? "-" : n.toFixed(d));
  const header = ["figure", "distribution", "CPU us", "ours", "CPU us", "ours/dist", "CPU ours/dist"];
  const lines = rows.map((row) => {
    if (row.unit === "ms") {
      const [a, b] = [(row.ours as { ms: number }).ms, (row.theirs as { ms: number }).ms];
      return [row.label, `${f(b, 0)} ms`, "", `${f(a, 0)} ms`, "", `${f(a / b, 2)}x time`, ""];
    }
    const [a, b] = [row.ours as Measured, row.theirs as Measured];
    const errors = (m: Measured) => (m.errors ? ` (${m.errors} ERRORS)` : "");
    return [row.label, `${f(b.rps, 1)}${errors(b)}`, f(b.cpuUs, 0), `${f(a.rps, 1)}${errors(a)}`, f(a.cpuUs, 0), `${f(a.rps / b.rps, 2)}x`, `${f(a.cpuUs / b.cpuUs, 2)}x`];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const fmt = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ");
  return [fmt(header), ...lines.map(fmt)].join("\n");
}
