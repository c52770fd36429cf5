import type { NodeRequest, NodeResponse } from "../http/node-types.js";
import { writeJson } from "../http/status-json.js";
import { checkTag } from "../../domains/registry/index.js";
import { historyBody } from "./history-body.js";
import { parseWindow } from "./history-window.js";
import { fail, NO_STORE, REGISTRY_VERSION_HEADERS } from "./registry-errors.js";
import type { RegistryContext } from "./context.js";
import type { RepositoryCall } from "./repository-call.js";

/** Most history records one request returns (spec 8). */
export const HISTORY_LIMIT = 1000;
/**
 * The path segments that introduce a tag's history: the spec's `_service`, and `_chainguard`, where
 * the hosted registry serves it. Neither can be part of a repository name (whose components start
 * with a letter or digit).
 */
export const HISTORY_SEPARATORS = ["/_service/history/", "/_chainguard/history/"] as const;

/** `/v2/<organization>/<image...>/_service/history/<tag>` (or `_chainguard`) split on the last separator, or undefined for another path. */
export function matchHistoryPath(path: string): { name: string; tag: string } | undefined {
  if (!path.startsWith("/v2/")) return undefined;
  let at = -1;
  let separator = "";
  for (const candidate of HISTORY_SEPARATORS) {
    const found = path.lastIndexOf(candidate);
    if (found > at) [at, separator] = [found, candidate];
  }
  if (at < "/v2/".length) return undefined;
  return { name: path.slice("/v2/".length, at), tag: path.slice(at + separator.length) };
}

/**
 * `GET /v2/<organization>/<image>/_service/history/<tag>[?start=&end=]` (or `_chainguard/history`): the digests the
 * tag has pointed to, oldest first, at most 1000, within inclusive bounds. Handed its repository
 * resolved and the caller authorized (`answerOnRepository`).
 */
export async function handleTagHistory(ctx: RegistryContext, req: NodeRequest, res: NodeResponse, { repo, access: entry }: RepositoryCall, tag: string, query: URLSearchParams): Promise<void> {
  const { name } = repo;
  checkTag(tag);
  if (Array.isArray(entry.tags) && !entry.tags.includes(tag)) {
    fail(403, "DENIED", `this token only grants the tags ${entry.tags.join(", ")} of ${name.full}`, { name: name.full, tag });
  }

  const window = parseWindow(query);

  const rows = await repo.tagHistory(tag, { ...window, limit: HISTORY_LIMIT });
  writeJson(res, 200, historyBody(rows), REGISTRY_VERSION_HEADERS, NO_STORE);
}
