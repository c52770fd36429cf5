import http from "node:http";
import type { Registry } from "prom-client";

/**
 * The metrics listener (`serve --metrics-port`): `GET /metrics` in the Prometheus text format
 *, anything else 404. A port of its own, so that
 * scraping needs no API token and the API port exposes nothing operational (docs/decisions.md).
 */
export function createMetricsServer(registry: Registry): http.Server {
  return http.createServer((req, res) => {
    const path = (req.url ?? "").split("?")[0];
    if (path !== "/metrics") {
      res.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end("Not found: the metrics are at /metrics\n");
      return;
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD", "content-type": "text/plain; charset=utf-8" }).end("Method not allowed: GET /metrics\n");
      return;
    }
    registry.metrics().then(
      (text) => {
        res.writeHead(200, { "content-type": registry.contentType, "content-length": Buffer.byteLength(text) });
        res.end(req.method === "HEAD" ? undefined : text);
      },
      (error: unknown) => res.writeHead(500, { "content-type": "text/plain; charset=utf-8" }).end(`metrics collection failed: ${String(error)}\n`),
    );
  });
}
