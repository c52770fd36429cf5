import type http from "node:http";
import type http2 from "node:http2";
import type { ServerConfig } from "../config.js";
import type { Logger } from "../logger.js";

/**
 * The registry host (its own listener). The token endpoint, Tag History and
 * the OCI Distribution API arrive with the registry issues; until then it
 * answers the registry API version check and refuses everything else in the
 * registry's JSON error format.
 */
export function createRegistryHost(_config: ServerConfig, _logger: Logger) {
  return (req: http.IncomingMessage | http2.Http2ServerRequest, res: http.ServerResponse | http2.Http2ServerResponse) => {
    const path = req.url?.split("?")[0];
    if (path === "/v2/" || path === "/v2") {
      res.writeHead(200, { "content-type": "application/json", "docker-distribution-api-version": "registry/2.0" });
      res.end("{}");
      return;
    }
    res.writeHead(404, { "content-type": "application/json" });
    res.end(JSON.stringify({ errors: [{ code: "NAME_UNKNOWN", message: "not served yet", detail: path }] }));
  };
}
