// An OSV feed served over HTTP(S) for the advisory feed tests: an archive (`/osv/all.zip`) and a
// folder in osv.dev's layout (`/osv/modified_id.csv`, `/osv/<id>.json`), with ETag and
// Last-Modified, 304 to a matching conditional GET, an index served from a file instead (a huge
// or hostile one), and faults on demand (a corrupt archive, a connection cut mid-body, an answer
// that never comes, a body that trickles or never ends). Every request is recorded.

import { createHash } from "node:crypto";
import { execFile } from "node:child_process";
import { createReadStream, readdirSync, readFileSync, statSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import type { AddressInfo, Socket } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import { makeZip } from "./zip-writer.js";
import { inRepo } from "./repo.js";

/** The 32 RustSec records of the repository's samples (CC0). */
export const SAMPLE_DIR = inRepo("samples/osv/rustsec/crates");

export type OsvJson = Record<string, unknown> & { id: string; modified: string };

/** The sample records by id, as parsed JSON, in id order. */
export function sampleRecords(): Map<string, OsvJson> {
  const files = readdirSync(SAMPLE_DIR).filter((f) => f.endsWith(".json")).sort();
  return new Map(files.map((f) => [f.slice(0, -5), JSON.parse(readFileSync(join(SAMPLE_DIR, f), "utf8")) as OsvJson]));
}

/** A fault the next answers to the archive or the index have. */
export type Fault =
  /** Bytes that are not a whole zip: the archive with bytes of its last entry overwritten. */
  | "corrupt"
  /** The headers and half the body, then the connection is destroyed. */
  | "cut"
  /** Nothing is ever answered (until the server closes). */
  | "hang"
  /** A 200 whose body comes one byte every `dripMs` and never ends. */
  | "drip"
  /** A 200 whose body comes fast (16 KiB every 10 ms) and never ends. */
  | "endless";

export interface FeedRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  status: number;
  start: number;
  end: number;
}

export interface FeedServer {
  /** `<scheme>://<host>:<port>`. */
  origin: string;
  /** The archive's URL. */
  archiveUrl: string;
  /** The folder's URL (with its trailing slash). */
  folderUrl: string;
  /** The records served now: change them (and `publish()`) to change the feed. */
  records: Map<string, OsvJson>;
  /** Rebuilds the archive and the index from `records` (a new ETag and Last-Modified). */
  publish(): void;
  fault: Fault | undefined;
  /** The gap between two bytes of the "drip" fault, ms (default 2000). */
  dripMs: number;
  /** A file served as `modified_id.csv` instead of the index of `records` (validators as published). */
  indexFile: string | undefined;
  requests: FeedRequest[];
  /** Connections accepted so far. */
  connections(): number;
  /** Most requests in progress at once so far. */
  maxInFlight(): number;
  close(): Promise<void>;
}

const execFileAsync = promisify(execFile);

/** A self-signed P-256 certificate for localhost and 127.0.0.1, made by openssl in `dir`: its paths. */
export async function makeCertificate(dir: string): Promise<{ certPath: string; keyPath: string }> {
  const certPath = join(dir, "feed.crt");
  const keyPath = join(dir, "feed.key");
  await execFileAsync("openssl", [
    ...["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2"],
    ...["-keyout", keyPath, "-out", certPath, "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
  ]);
  return { certPath, keyPath };
}

/** Starts a feed server of `records` on loopback; with `tls`, over https as `localhost`. */
export async function startFeedServer(records: Map<string, OsvJson>, tls?: { certPath: string; keyPath: string }): Promise<FeedServer> {
  let archive: Buffer = Buffer.alloc(0);
  let index = "";
  let etag = "";
  let lastModified = "";
  let version = 0;
  const requests: FeedRequest[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  let inFlight = 0;
  let maxInFlight = 0;

  function publish() {
    const sorted = [...feed.records.values()].sort((a, b) => (a.modified < b.modified ? 1 : a.modified > b.modified ? -1 : 0));
    archive = makeZip(sorted.map((r) => ({ name: `${r.id}.json`, data: JSON.stringify(r, null, 2) })));
    index = sorted.map((r) => `${r.modified},${r.id}\n`).join("");
    version++;
    etag = `"${createHash("sha256").update(archive).digest("hex").slice(0, 16)}-${version}"`;
    lastModified = new Date(Date.UTC(2025, 0, 1) + version * 60_000).toUTCString();
  }

  function answer(req: http.IncomingMessage, res: http.ServerResponse) {
    const path = new URL(req.url ?? "/", "http://feed").pathname;
    const entry: FeedRequest = { path, headers: req.headers, status: 0, start: Date.now(), end: 0 };
    requests.push(entry);
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    res.on("close", () => {
      inFlight--;
      entry.end = Date.now();
    });
    const send = (status: number, body: Buffer | string, headers: Record<string, string> = {}) => {
      entry.status = status;
      res.writeHead(status, { "content-length": String(Buffer.byteLength(body)), ...headers });
      res.end(body);
    };
    const whole = path === "/osv/all.zip" || path === "/osv/modified_id.csv";
    if (whole) {
      const validators = { etag, "last-modified": lastModified };
      if (feed.fault === "hang") return;
      if (req.headers["if-none-match"] === etag) return send(304, "", validators);
      if (feed.fault === "drip" || feed.fault === "endless") {
        entry.status = 200;
        res.writeHead(200, validators);
        const [every, size] = feed.fault === "drip" ? [feed.dripMs, 1] : [10, 16 * 1024];
        const timer = setInterval(() => res.write(Buffer.alloc(size, 0x30)), every);
        res.on("close", () => clearInterval(timer));
        return;
      }
      if (path === "/osv/modified_id.csv" && feed.indexFile !== undefined) {
        entry.status = 200;
        res.writeHead(200, { "content-length": String(statSync(feed.indexFile).size), ...validators, "content-type": "text/csv" });
        createReadStream(feed.indexFile).pipe(res);
        return;
      }
      let body = path === "/osv/all.zip" ? archive : Buffer.from(index);
      if (feed.fault === "corrupt") {
        body = Buffer.from(body);
        // Overwrite bytes well inside the last entry's data: the directory stays readable.
        const directory = body.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
        body.fill(0x55, Math.max(0, directory - 400), Math.max(0, directory - 40));
      }
      if (feed.fault === "cut") {
        entry.status = 200;
        res.writeHead(200, { "content-length": String(body.length), ...validators });
        res.write(body.subarray(0, body.length >> 1), () => setTimeout(() => res.socket?.destroy(), 20));
        return;
      }
      return send(200, body, { ...validators, "content-type": path.endsWith(".zip") ? "application/zip" : "text/csv" });
    }
    const record = /^\/osv\/([^/]+)\.json$/.exec(path);
    const found = record ? feed.records.get(decodeURIComponent(record[1])) : undefined;
    if (found) return send(200, JSON.stringify(found), { "content-type": "application/json" });
    send(404, "not found");
  }

  const server = tls ? https.createServer({ cert: readFileSync(tls.certPath), key: readFileSync(tls.keyPath) }, answer) : http.createServer(answer);
  server.on("connection", (socket: Socket) => {
    connections++;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `${tls ? "https" : "http"}://${tls ? "localhost" : "127.0.0.1"}:${port}`;
  const feed: FeedServer = {
    origin,
    archiveUrl: `${origin}/osv/all.zip`,
    folderUrl: `${origin}/osv/`,
    records,
    publish,
    fault: undefined,
    dripMs: 2000,
    indexFile: undefined,
    requests,
    connections: () => connections,
    maxInFlight: () => maxInFlight,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  publish();
  return feed;
}
