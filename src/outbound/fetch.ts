import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import http from "node:http";
import https from "node:https";
import { BlockList, isIP, type LookupFunction } from "node:net";
import { createWriteStream } from "node:fs";
import { pipeline } from "node:stream/promises";
import { pipeline as pipelineCallback, Transform, type Readable } from "node:stream";
import { injectTraceContext } from "../telemetry/tracing.js";

/**
 * The server's only outbound HTTP client (the token exchange's discovery documents and JWKS,
 * event deliveries to subscription sinks, advisory feeds): callers' data names the URLs, so it guards against
 * being pointed at the server's own network (SSRF).
 *
 * - `https:` only, unless `allowHttp`.
 * - The address actually connected to must be public (not loopback, private, link-local, CGNAT,
 *   multicast, reserved, ...) unless `allowPrivateAddresses`: an IP literal is checked as written,
 *   a host name by the addresses DNS gives for it, in the connection's own lookup (so a name that
 *   resolves differently on a second lookup cannot slip through). Any non-public address refuses.
 * - No redirects: a 3xx is an answer like any other.
 * - One deadline, `timeoutMs`, for the whole exchange (connect, headers and body), and at most
 *   `maxBytes` of body.
 * - Downloads only: with `minRate`, at least `bytesPerSecond` on average over each `windowMs` from
 *   the request on, so that an upstream that trickles is cut long before the deadline.
 */
export interface OutboundPolicy {
  allowHttp: boolean;
  allowPrivateAddresses: boolean;
  /** The operator flag(s) that relax the policy, named in refusals (e.g. `serve --allow-http-issuers`). */
  relaxedBy?: { http: string; privateAddresses: string };
  timeoutMs: number;
  maxBytes: number;
  /** The byte-rate floor of `outboundDownload` (none when undefined). */
  minRate?: { bytesPerSecond: number; windowMs: number };
}

/** An outbound fetch refused or failed; the message is for the log. */
export class OutboundFetchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "OutboundFetchError";
  }
}

/** Addresses that are not on the public internet (IANA special-purpose registries). */
const NON_PUBLIC = new BlockList();
for (const [net, prefix] of [
  ["0.0.0.0", 8], // "this network"
  ["10.0.0.0", 8],
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8],
  ["169.254.0.0", 16], // link-local, cloud metadata services
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.88.99.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, broadcast
] as const) {
  NON_PUBLIC.addSubnet(net, prefix, "ipv4");
}
for (const [net, prefix] of [
  ["::", 128],
  ["::1", 128],
  ["100::", 64], // discard
  ["2001:db8::", 32], // documentation
  ["fc00::", 7], // unique local
  ["fe80::", 10], // link-local
  ["fec0::", 10], // site-local (deprecated)
  ["ff00::", 8], // multicast
] as const) {
  NON_PUBLIC.addSubnet(net, prefix, "ipv6");
}

/** The IPv4 address an IPv6 address embeds (IPv4-mapped, IPv4-compatible, NAT64, 6to4), if any. */
function embeddedIpv4(ipv6: string): string | undefined {
  const dotted = /^(?:::ffff:|::|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/i.exec(ipv6);
  if (dotted) return dotted[1];
  const groups = expandIpv6(ipv6);
  if (!groups) return undefined;
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  const zeros = (from: number, to: number) => groups.slice(from, to).every((g) => g === 0);
  if (zeros(0, 5) && (groups[5] === 0xffff || groups[5] === 0)) return v4(groups[6], groups[7]); // ::ffff:a.b.c.d, ::a.b.c.d
  if (groups[0] === 0x64 && groups[1] === 0xff9b && zeros(2, 6)) return v4(groups[6], groups[7]); // NAT64
  if (groups[0] === 0x2002) return v4(groups[1], groups[2]); // 6to4
  return undefined;
}

/** The eight 16-bit groups of an IPv6 address in hex notation; undefined for a dotted tail. */
function expandIpv6(ipv6: string): number[] | undefined {
  const address = ipv6.split("%")[0];
  if (address.includes(".")) return undefined;
  const [head, tail] = address.split("::");
  const parse = (part: string | undefined) => (part ? part.split(":").map((g) => parseInt(g, 16)) : []);
  const left = parse(head);
  const right = parse(tail);
  const fill = address.includes("::") ? new Array<number>(8 - left.length - right.length).fill(0) : [];
  const groups = [...left, ...fill, ...right];
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined;
}

/** Whether an IP address (v4 or v6 text) is on the public internet. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !NON_PUBLIC.check(address, "ipv4");
  if (family !== 6) return false;
  const v4 = embeddedIpv4(address);
  if (v4 !== undefined && !isPublicAddress(v4)) return false;
  return !NON_PUBLIC.check(address.split("%")[0], "ipv6");
}

/** A connection lookup that resolves as usual and refuses when any address of the name is not public. */
const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
    if (error) return callback(error, "", 0);
    const refused = addresses.find((a) => !isPublicAddress(a.address));
    if (refused || addresses.length === 0) {
      const reason = refused ? `resolves to ${refused.address}, which is not a public address` : "has no address";
      return callback(Object.assign(new Error(`${hostname} ${reason}`), { code: "ERR_NON_PUBLIC_ADDRESS" }), "", 0);
    }
    if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
    callback(null, addresses[0].address, addresses[0].family);
  });
};

/** Checks a URL against the policy before anything is sent; throws OutboundFetchError. */
export function checkOutboundUrl(url: URL, policy: Pick<OutboundPolicy, "allowHttp" | "allowPrivateAddresses" | "relaxedBy">): void {
  const relaxedBy = policy.relaxedBy ?? { http: "serve --allow-http-issuers", privateAddresses: "serve --allow-private-issuers" };
  if (url.protocol !== "https:" && !(url.protocol === "http:" && policy.allowHttp)) {
    throw new OutboundFetchError(`${url.href} is not an https URL${url.protocol === "http:" ? ` (plain http is not allowed: ${relaxedBy.http})` : ""}`);
  }
  if (url.username !== "" || url.password !== "") throw new OutboundFetchError(`${url.href} carries credentials`);
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  if (!policy.allowPrivateAddresses && isIP(host) !== 0 && !isPublicAddress(host)) {
    throw new OutboundFetchError(`${url.href} names ${host}, which is not a public address (${relaxedBy.privateAddresses})`);
  }
}

/** GETs `url` and parses its body as JSON, within the policy; any answer but 200 is an error. Throws OutboundFetchError. */
export async function fetchJson(url: URL, policy: OutboundPolicy): Promise<unknown> {
  const res = await outboundRequest(url, { method: "GET", headers: { accept: "application/json" } }, policy);
  if (res.status !== 200) throw new OutboundFetchError(`${url.href} answered HTTP ${res.status} (redirects are not followed)`);
  try {
    return JSON.parse(res.body.toString("utf8")) as unknown;
  } catch {
    throw new OutboundFetchError(`${url.href} is not JSON`);
  }
}

export interface OutboundRequest {
  method: "GET" | "POST";
  headers: Record<string, string>;
  body?: Buffer;
}

/**
 * Sends one request within the policy and reads the whole answer (at most `maxBytes`), whatever
 * its status. Throws OutboundFetchError when refused by the policy, on connection errors and
 * when the deadline passes.
 */
/** The request carries the active span's `traceparent` when tracing is on. */
export function outboundRequest(url: URL, request: OutboundRequest, policy: OutboundPolicy): Promise<{ status: number; body: Buffer; headers: http.IncomingHttpHeaders }> {
  checkOutboundUrl(url, policy);
  const client = url.protocol === "https:" ? https : http;
  return new Promise((resolve, reject) => {
    let settled = false;
    const deadline = setTimeout(() => finish(new OutboundFetchError(`${url.href} did not answer within ${policy.timeoutMs} ms`)), policy.timeoutMs);
    function finish(error: Error | undefined, value?: { status: number; body: Buffer; headers: http.IncomingHttpHeaders }) {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      req.destroy();
      if (error) reject(error instanceof OutboundFetchError ? error : new OutboundFetchError(`${request.method} ${url.href} failed: ${error.message}`));
      else resolve(value!);
    }
    let req: http.ClientRequest;
    const headers: Record<string, string> = { ...request.headers, ...(request.body ? { "content-length": String(request.body.byteLength) } : {}) };
    injectTraceContext(headers);
    try {
      req = client.request(
        url,
        {
          method: request.method,
          headers,
          agent: false,
          ...(policy.allowPrivateAddresses ? {} : { lookup: publicOnlyLookup }),
        },
        (res) => {
          const status = res.statusCode ?? 0;
          const declared = Number(res.headers["content-length"]);
          if (Number.isFinite(declared) && declared > policy.maxBytes) return finish(new OutboundFetchError(`${url.href} is larger than ${policy.maxBytes} bytes`));
          const chunks: Buffer[] = [];
          let size = 0;
          res.on("data", (chunk: Buffer) => {
            size += chunk.byteLength;
            if (size > policy.maxBytes) return finish(new OutboundFetchError(`${url.href} is larger than ${policy.maxBytes} bytes`));
            chunks.push(chunk);
          });
          res.on("error", (error) => finish(error));
          res.on("end", () => finish(undefined, { status, body: Buffer.concat(chunks), headers: res.headers }));
        },
      );
    } catch (error) {
      settled = true;
      clearTimeout(deadline);
      return reject(new OutboundFetchError(`${request.method} ${url.href} failed: ${(error as Error).message}`));
    }
    req.on("error", (error) => finish(error));
    req.end(request.body);
  });
}

/** What `outboundDownload` received: the status and headers; for a 200, the body is in the file. */
export interface OutboundDownload {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Bytes written to the file (0 unless the status is 200). */
  bytes: number;
}

/**
 * GETs `url` within the policy and, when it answers 200, streams the body to the file `path`
 * (created or truncated), never holding it whole in memory: at most `maxBytes` are written, and a
 * body that would be larger (by its Content-Length or by counting) fails. Any other status is
 * returned with its headers and its body dropped (a 304 to a conditional `headers`, a 404, a 3xx:
 * redirects are not followed). The deadline `timeoutMs` covers connect to last byte; with
 * `minRate`, fewer than `bytesPerSecond * windowMs / 1000` body bytes in any window (counted from
 * the request, so a late answer counts as nothing received) fails too; `signal` aborts it. A body
 * cut short (the connection closed before Content-Length bytes, or a broken chunked encoding)
 * fails. Throws OutboundFetchError; on a failure the file's content is undefined.
 */
export function outboundDownload(url: URL, headers: Record<string, string>, path: string, policy: OutboundPolicy, signal?: AbortSignal): Promise<OutboundDownload> {
  checkOutboundUrl(url, policy);
  const client = url.protocol === "https:" ? https : http;
  return new Promise((resolve, reject) => {
    let settled = false;
    let bytes = 0;
    const deadline = setTimeout(() => finish(new OutboundFetchError(`${url.href} did not finish within ${policy.timeoutMs} ms`)), policy.timeoutMs);
    const floor = policy.minRate && rateFloor(url, policy.minRate, () => bytes, finish);
    const onAbort = () => finish(new OutboundFetchError(`GET ${url.href} was stopped`));
    signal?.addEventListener("abort", onAbort, { once: true });
    function finish(error: Error | undefined, value?: OutboundDownload) {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      clearInterval(floor);
      signal?.removeEventListener("abort", onAbort);
      req.destroy();
      if (error) reject(error instanceof OutboundFetchError ? error : new OutboundFetchError(`GET ${url.href} failed: ${error.message}`));
      else resolve(value!);
    }
    const sent: Record<string, string> = { ...headers };
    injectTraceContext(sent);
    let req: http.ClientRequest;
    try {
      req = client.request(url, { method: "GET", headers: sent, agent: false, ...(policy.allowPrivateAddresses ? {} : { lookup: publicOnlyLookup }) }, (res) => {
        const status = res.statusCode ?? 0;
        if (status !== 200) {
          res.resume();
          res.on("error", () => {});
          return finish(undefined, { status, headers: res.headers, bytes: 0 });
        }
        const declared = Number(res.headers["content-length"]);
        if (Number.isFinite(declared) && declared > policy.maxBytes) return finish(new OutboundFetchError(`${url.href} is larger than ${policy.maxBytes} bytes`));
        const counter = new Transform({
          transform(chunk: Buffer, _encoding, done) {
            bytes += chunk.byteLength;
            if (bytes > policy.maxBytes) return done(new OutboundFetchError(`${url.href} is larger than ${policy.maxBytes} bytes`));
            done(null, chunk);
          },
        });
        // A response closed before its end (Content-Length not reached, a chunked body cut) is an error: `aborted`.
        res.on("aborted", () => res.destroy(new Error("the connection closed before the whole body arrived")));
        pipeline(res, counter, createWriteStream(path)).then(
          () => {
            if (Number.isFinite(declared) && bytes !== declared) return finish(new OutboundFetchError(`${url.href} sent ${bytes} of ${declared} bytes`));
            finish(undefined, { status, headers: res.headers, bytes });
          },
          (error: Error) => finish(error),
        );
      });
    } catch (error) {
      settled = true;
      clearTimeout(deadline);
      clearInterval(floor);
      signal?.removeEventListener("abort", onAbort);
      return reject(new OutboundFetchError(`GET ${url.href} failed: ${(error as Error).message}`));
    }
    if (signal?.aborted) return onAbort();
    req.on("error", (error) => finish(error));
    req.end();
  });
}

/** Every `windowMs`, fails the download (`fail`) when fewer than the floor's bytes arrived in the window; clear it when the download ends. */
function rateFloor(url: URL, floor: { bytesPerSecond: number; windowMs: number }, received: () => number, fail: (error: Error) => void): NodeJS.Timeout {
  const least = Math.ceil((floor.bytesPerSecond * floor.windowMs) / 1000);
  let before = 0;
  return setInterval(() => {
    const now = received();
    if (now - before < least) {
      fail(new OutboundFetchError(`${url.href} sent ${now - before} bytes in ${floor.windowMs} ms, less than the floor of ${floor.bytesPerSecond} bytes per second`));
    }
    before = now;
  }, floor.windowMs);
}

/**
 * Resolves the URL's host (an IP literal as written) and throws OutboundFetchError when any of
 * its addresses is not public: the check a URL gets when it is stored (a webhook sink), before
 * the connection's own check when it is used.
 */
export async function checkPublicHost(url: URL): Promise<void> {
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  const addresses = isIP(host) !== 0 ? [host] : await lookupAll(host);
  const refused = addresses.find((a) => !isPublicAddress(a));
  if (refused !== undefined) throw new OutboundFetchError(`${url.host} resolves to ${refused}, which is not a public address`);
  if (addresses.length === 0) throw new OutboundFetchError(`${url.host} has no address`);
}

function lookupAll(host: string): Promise<string[]> {
  return new Promise((resolve, reject) =>
    dnsLookup(host, { all: true }, (error, addresses: LookupAddress[]) =>
      error ? reject(new OutboundFetchError(`${host} does not resolve: ${error.code ?? error.message}`)) : resolve(addresses.map((a) => a.address)),
    ),
  );
}

/** What `outboundStream` answers: the final URL (after redirects), the status and headers, and the body, unread. */
export interface OutboundStream {
  url: URL;
  status: number;
  headers: http.IncomingHttpHeaders;
  /**
   * The body as it arrives; it fails (an OutboundFetchError) when it would pass `maxBytes`, when no
   * byte arrives for `timeoutMs`, when the connection closes before its end, or on `signal`.
   * Destroy it when it is not wanted.
   */
  body: Readable;
}

/** The statuses a redirect is followed from. */
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * Sends a GET or HEAD within the policy and answers once the headers arrive (within `timeoutMs`),
 * with the body left to the caller to stream: the upstream registries' manifests and blobs. With
 * `maxRedirects`, a redirect (301, 302, 303, 307, 308 with a Location) is followed at most that
 * many times, each hop checked by the policy as the first URL is (https unless `allowHttp`, public
 * addresses unless `allowPrivateAddresses`, at its own connection); `Authorization` is sent to the
 * first URL's origin only (storage URLs carry their own signature). Without it, or past it, the
 * 3xx is answered like any other status. Throws OutboundFetchError when refused, on connection
 * errors, and when the deadline passes first.
 */
export async function outboundStream(
  url: URL,
  request: { method: "GET" | "HEAD"; headers: Record<string, string> },
  policy: OutboundPolicy & { maxRedirects?: number },
  signal?: AbortSignal,
): Promise<OutboundStream> {
  let current = url;
  for (let hop = 0; ; hop++) {
    const headers = current.origin === url.origin ? request.headers : withoutAuthorization(request.headers);
    const answer = await streamOnce(current, request.method, headers, policy, signal);
    const location = answer.headers.location;
    if (!REDIRECTS.has(answer.status) || location === undefined || hop >= (policy.maxRedirects ?? 0)) return answer;
    answer.body.destroy();
    let next: URL;
    try {
      next = new URL(location, current);
    } catch {
      throw new OutboundFetchError(`${current.href} redirected to ${location.slice(0, 256)}, which is not a URL`);
    }
    current = next;
  }
}

function withoutAuthorization(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => name.toLowerCase() !== "authorization"));
}

/** One exchange of `outboundStream`: the headers within the deadline, the body bounded by size and by idle time. */
function streamOnce(url: URL, method: "GET" | "HEAD", headers: Record<string, string>, policy: OutboundPolicy, signal?: AbortSignal): Promise<OutboundStream> {
  checkOutboundUrl(url, policy);
  const client = url.protocol === "https:" ? https : http;
  return new Promise((resolve, reject) => {
    let answered = false;
    const fail = (error: Error) => {
      if (answered) return;
      answered = true;
      clearTimeout(deadline);
      req.destroy();
      reject(error instanceof OutboundFetchError ? error : new OutboundFetchError(`${method} ${url.href} failed: ${error.message}`));
    };
    const deadline = setTimeout(() => fail(new OutboundFetchError(`${url.href} did not answer within ${policy.timeoutMs} ms`)), policy.timeoutMs);
    const onAbort = () => {
      const error = new OutboundFetchError(`${method} ${url.href} was stopped`);
      fail(error);
      req.destroy(error);
    };
    if (signal?.aborted) {
      clearTimeout(deadline);
      return reject(new OutboundFetchError(`${method} ${url.href} was stopped`));
    }
    const sent: Record<string, string> = { ...headers };
    injectTraceContext(sent);
    let req: http.ClientRequest;
    try {
      req = client.request(url, { method, headers: sent, agent: false, ...(policy.allowPrivateAddresses ? {} : { lookup: publicOnlyLookup }) }, (res) => {
        answered = true;
        clearTimeout(deadline);
        const declared = Number(res.headers["content-length"]);
        if (method === "GET" && Number.isFinite(declared) && declared > policy.maxBytes && (res.statusCode ?? 0) < 300) {
          res.destroy();
          return reject(new OutboundFetchError(`${url.href} is larger than ${policy.maxBytes} bytes`));
        }
        let size = 0;
        const body = new Transform({
          transform(chunk: Buffer, _encoding, done) {
            size += chunk.byteLength;
            if (size > policy.maxBytes) return done(new OutboundFetchError(`${url.href} is larger than ${policy.maxBytes} bytes`));
            done(null, chunk);
          },
        });
        res.on("aborted", () => res.destroy(new OutboundFetchError(`${url.href}: the connection closed before the whole body arrived`)));
        req.setTimeout(policy.timeoutMs, () => res.destroy(new OutboundFetchError(`${url.href} sent nothing for ${policy.timeoutMs} ms`)));
        pipelineCallback(res, body, (error) => {
          signal?.removeEventListener("abort", onAbort);
          if (error) req.destroy();
        });
        resolve({ url, status: res.statusCode ?? 0, headers: res.headers, body });
      });
    } catch (error) {
      clearTimeout(deadline);
      return reject(new OutboundFetchError(`${method} ${url.href} failed: ${(error as Error).message}`));
    }
    signal?.addEventListener("abort", onAbort, { once: true });
    req.on("error", (error) => {
      if (!answered) fail(error);
    });
    req.end();
  });
}
