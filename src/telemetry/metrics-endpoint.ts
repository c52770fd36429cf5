import type { Registry } from "prom-client";
import type { NodeRequest, NodeResponse } from "../transport/http/node-types.js";

/**
 * The metrics listener's routes (`serve --metrics-port`): `GET /metrics` in the Prometheus text
 * format, anything else 404. A port of its own, so that scraping needs no API token and the API port
 * exposes nothing operational (docs/decisions.md); it listens with the same connection limits as the
 * hosts. A collection that fails rejects (the listener answers 500).
 */
export function createMetricsRoutes(registry: Registry): (req: NodeRequest, res: NodeResponse) => Promise<void> | void {
  return (req, res) => {
    const path = (req.url ?? "").split("?")[0];
    if (path !== "/metrics") {
      res.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end("Not found: the metrics are at /metrics\n");
      return;
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD", "content-type": "text/plain; charset=utf-8" }).end("Method not allowed: GET /metrics\n");
      return;
    }
    return registry.metrics().then((text) => {
      res.writeHead(200, { "content-type": registry.contentType, "content-length": Buffer.byteLength(text) });
      if (req.method === "HEAD") res.end();
      else res.end(text);
    });
  };
}
