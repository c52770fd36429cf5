import type { NodeRequest, NodeResponse } from "./node-types.js";

export interface ProbeOptions {
  /** Whether the store answers and holds every migration this build knows; throwing counts as not ready. */
  ready: () => Promise<boolean>;
  /** Longest a readiness check may take before it counts as not ready, ms. */
  timeoutMs: number;
}

export interface Probes {
  /** Answers `GET|HEAD /healthz` and `/readyz` and returns true; returns false for any other request. */
  handle(req: NodeRequest, res: NodeResponse): boolean;
  /** From now on `/readyz` answers 503 (shutdown); `/healthz` still answers 200. */
  stopServing(): void;
}

const PATHS = new Set(["/healthz", "/readyz"]);

/**
 * The plain-HTTP probes of both hosts, unauthenticated: `/healthz` (live: the process answers
 * HTTP, 200 `ok`) and `/readyz` (200 `ok` while serving and `ready()` holds within `timeoutMs`,
 * else 503 with the reason). Concurrent readiness checks share one store query.
 */
export function createProbes(options: ProbeOptions): Probes {
  let serving = true;
  let inFlight: Promise<string | undefined> | undefined;

  /** Undefined when ready, else why not. */
  const check = (): Promise<string | undefined> =>
    (inFlight ??= new Promise<string | undefined>((resolve) => {
      const timer = setTimeout(() => resolve(`the store did not answer within ${options.timeoutMs} ms`), options.timeoutMs);
      options.ready().then(
        (ready) => resolve(ready ? undefined : "the store's migrations are not all applied"),
        () => resolve("the store is unreachable"),
      ).finally(() => clearTimeout(timer));
    }).finally(() => (inFlight = undefined)));

  return {
    handle(req, res) {
      // Asked of every request on both hosts: nothing allocated for a path without a query.
      const url = req.url ?? "";
      const query = url.indexOf("?");
      const path = query < 0 ? url : url.slice(0, query);
      if (!PATHS.has(path)) return false;
      if (req.method !== "GET" && req.method !== "HEAD") {
        write(res, 405, "only GET and HEAD", { allow: "GET, HEAD" });
        return true;
      }
      if (path === "/healthz") {
        write(res, 200, "ok");
        return true;
      }
      if (!serving) {
        write(res, 503, "shutting down");
        return true;
      }
      void check().then((reason) => write(res, reason === undefined ? 200 : 503, reason ?? "ok"));
      return true;
    },
    stopServing() {
      serving = false;
    },
  };
}

function write(res: NodeResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  const body = `${text}\n`;
  res.writeHead(status, { "content-type": "text/plain; charset=utf-8", "content-length": Buffer.byteLength(body), "cache-control": "no-store", ...headers });
  res.end(body);
}
