import type { NodeRequest, NodeResponse } from "../rest/node-types.js";
import { writeJson } from "../rest/status-json.js";
import { findRepoByPath } from "../store/repositories/repos.js";
import { readTagHistory } from "../store/repositories/tag-history.js";
import { authorizeRepository } from "./registry-auth.js";
import { fail, REGISTRY_VERSION_HEADERS } from "./registry-errors.js";
import { checkTag, parseRepositoryName, PULL } from "./scope.js";
import type { RegistryContext } from "./context.js";

/** Most history records one request returns (spec 8). */
export const HISTORY_LIMIT = 1000;
export const HISTORY_SEPARATOR = "/_service/history/";

/** `/v2/<organization>/<image...>/_service/history/<tag>` split on the last separator, or undefined for another path. */
export function matchHistoryPath(path: string): { name: string; tag: string } | undefined {
  if (!path.startsWith("/v2/")) return undefined;
  const at = path.lastIndexOf(HISTORY_SEPARATOR);
  if (at < "/v2/".length) return undefined;
  return { name: path.slice("/v2/".length, at), tag: path.slice(at + HISTORY_SEPARATOR.length) };
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * Parses an RFC 3339 timestamp to epoch ms: a fraction below the millisecond rounds up
 * for a start bound and down for an end bound, so both stay inclusive of exactly what
 * they name. A space before the offset is read as `+` (an unencoded `+` in a query).
 * Returns undefined when the text is not a valid timestamp.
 */
export function parseTimestamp(text: string, bound: "start" | "end"): number | undefined {
  const m = RFC3339.exec(text.replace(/ (\d{2}:\d{2})$/, "+$1"));
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59) return undefined;
  const base = Date.UTC(year, month - 1, day, hour, minute, second);
  if (new Date(base).getUTCDate() !== day || day < 1) return undefined;
  let offsetMinutes = 0;
  if (m[8] !== "Z" && m[8] !== "z") {
    const [oh, om] = m[8].slice(1).split(":").map(Number);
    if (oh > 23 || om > 59) return undefined;
    offsetMinutes = (m[8][0] === "-" ? -1 : 1) * (oh * 60 + om);
  }
  const nanos = Number((m[7] ?? "").padEnd(9, "0"));
  const millis = bound === "start" ? Math.ceil(nanos / 1e6) : Math.floor(nanos / 1e6);
  const result = base - offsetMinutes * 60_000 + millis;
  return Number.isFinite(result) ? result : undefined;
}

/**
 * `GET /v2/<organization>/<image>/_service/history/<tag>[?start=&end=]`: the digests the
 * tag has pointed to, oldest first, at most 1000, within inclusive bounds.
 */
export async function handleTagHistory(ctx: RegistryContext, req: NodeRequest, res: NodeResponse, path: { name: string; tag: string }, query: URLSearchParams): Promise<void> {
  const name = parseRepositoryName(path.name);
  const entry = await authorizeRepository(ctx, req, name, PULL);

  const { tag } = path;
  checkTag(tag);
  if (Array.isArray(entry.tags) && !entry.tags.includes(tag)) {
    fail(403, "DENIED", `this token only grants the tags ${entry.tags.join(", ")} of ${name.full}`, { name: name.full, tag });
  }

  const window: { start?: number; end?: number } = {};
  for (const bound of ["start", "end"] as const) {
    const values = query.getAll(bound);
    if (values.length > 1) fail(400, "INVALID_ARGUMENT", `${bound} is given more than once`, { [bound]: values });
    if (values.length === 0) continue;
    const time = parseTimestamp(values[0], bound);
    if (time === undefined) fail(400, "INVALID_ARGUMENT", `${bound} must be an RFC 3339 timestamp, e.g. 2026-01-02T03:04:05.678Z`, { [bound]: values[0] });
    window[bound] = time;
  }
  if (window.start !== undefined && window.end !== undefined && window.start > window.end) {
    fail(400, "INVALID_ARGUMENT", "start is after end", { start: query.get("start"), end: query.get("end") });
  }

  const repo = await findRepoByPath(ctx.db, name.organization, name.image);
  if (repo === undefined) fail(404, "NAME_UNKNOWN", `repository ${name.full} is not known to the registry`, { name: name.full });
  const rows = await readTagHistory(ctx.db, repo.uid, tag, { ...window, limit: HISTORY_LIMIT });
  const history = rows.map((r) => ({ updateTimestamp: new Date(r.update_time).toISOString(), digest: r.digest }));
  writeJson(res, 200, JSON.stringify({ history }), { ...REGISTRY_VERSION_HEADERS, "cache-control": "no-store" });
}
