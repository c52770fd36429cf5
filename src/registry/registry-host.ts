import type { TokenService } from "../auth/tokens.js";
import type { ServerConfig } from "../config.js";
import type { Logger } from "../logger.js";
import type { NodeRequest, NodeResponse } from "../rest/node-types.js";
import { writeJson } from "../rest/status-json.js";
import type { Db } from "../store/tables.js";
import { fail, REGISTRY_VERSION_HEADERS, RegistryFailure, writeRegistryError } from "./registry-errors.js";
import { handleTagHistory, matchHistoryPath } from "./tag-history-endpoint.js";
import { handleToken } from "./token-endpoint.js";

export interface RegistryHostOptions {
  config: ServerConfig;
  logger: Logger;
  db: Db;
  tokens: TokenService;
}

/**
 * The registry host (its own listener): the API version check `GET /v2/`, the token
 * endpoint `GET /token` and Tag History `GET /v2/<org>/<image>/_service/history/<tag>`.
 * Every error is in the registry's JSON format `{"errors":[{code,message,detail}]}`.
 */
export function createRegistryHost(options: RegistryHostOptions) {
  const { logger } = options;
  return (req: NodeRequest, res: NodeResponse) => {
    void route(req, res).catch((error: unknown) => {
      if (error instanceof RegistryFailure) {
        writeRegistryError(res, error.error);
        return;
      }
      logger.error("registry request failed", { error: String(error) });
      if (!res.headersSent) writeRegistryError(res, { status: 500, code: "UNKNOWN", message: "internal error" });
    });
  };

  async function route(req: NodeRequest, res: NodeResponse): Promise<void> {
    const [path = "", queryText = ""] = (req.url ?? "").split(/\?(.*)/s, 2);
    const query = new URLSearchParams(queryText);
    if (path === "/v2/" || path === "/v2") {
      allowGet(req, path);
      writeJson(res, 200, "{}", { ...REGISTRY_VERSION_HEADERS });
      return;
    }
    if (path === "/token") {
      allowGet(req, path);
      await handleToken(options, req, res, query);
      return;
    }
    const history = matchHistoryPath(path);
    if (history !== undefined) {
      allowGet(req, path);
      await handleTagHistory(options, req, res, history, query);
      return;
    }
    fail(404, "NAME_UNKNOWN", "no such registry route", { path: path.slice(0, 256) });
  }
}

function allowGet(req: NodeRequest, path: string): void {
  if (req.method !== "GET" && req.method !== "HEAD") fail(405, "UNSUPPORTED", `method ${req.method} is not allowed on ${path}`, null, { allow: "GET" });
}
