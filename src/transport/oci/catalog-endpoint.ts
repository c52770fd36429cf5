import { findOrganizationByName } from "../../domains/iam/index.js";
import { MAX_NAME_LENGTH, repositoryPaths } from "../../domains/registry/index.js";
import type { RegistryContext, RegistryRequest, RegistryResponse } from "./context.js";
import { ACTION_CAPABILITIES, DEFAULT_PUBLIC_ORGANIZATION } from "./grant.js";
import { authorizeCatalog } from "./registry-auth.js";
import { fail, NO_STORE, REGISTRY_VERSION_HEADERS } from "./registry-errors.js";
import { PULL } from "./scope.js";

/** Most repository names one `_catalog` answer holds (and the answer without `n`). */
export const MAX_CATALOG_PAGE = 1000;

/**
 * `GET /v2/_catalog?n=&last=` (the Distribution API's catalog extension, as registries serve it):
 * `{"repositories": [...]}`, the registry paths of the repos the caller may pull, in byte order,
 * after `last`, at most `n` (1000 at most and by default), with `Link: <...>; rel="next"` when
 * more follow. What the caller may pull: the repos below the groups where it holds
 * `CAP_REGISTRY_PULL`, and the public organization's (whose latest tags anyone pulls).
 */
export async function handleCatalog(ctx: RegistryContext, req: RegistryRequest, res: RegistryResponse, query: URLSearchParams): Promise<void> {
  const caller = await authorizeCatalog(ctx, req);
  const nText = query.get("n");
  if (!/^\d{1,9}$/.test(nText ?? "0")) fail(400, "INVALID_ARGUMENT", "n must be a non-negative integer", { n: nText });
  const limit = Math.min(nText === null ? MAX_CATALOG_PAGE : Number(nText), MAX_CATALOG_PAGE);
  const last = query.get("last") ?? undefined;
  if (last !== undefined && last.length > MAX_NAME_LENGTH) fail(400, "INVALID_ARGUMENT", `last is a repository name: at most ${MAX_NAME_LENGTH} characters`, { last: last.slice(0, 64) });

  const visible = "grants" in caller ? caller.grants.visibleRoots(ACTION_CAPABILITIES[PULL]) : [];
  const publicOrganization = await findOrganizationByName(ctx.db, ctx.config.publicOrganization ?? DEFAULT_PUBLIC_ORGANIZATION);
  if (publicOrganization !== undefined && !visible.includes(publicOrganization.uid)) visible.push(publicOrganization.uid);
  const paths = await repositoryPaths(ctx.db, visible, { after: last, limit: limit + 1 });
  const page = paths.slice(0, limit);

  const headers: Record<string, string> = Object.assign({}, REGISTRY_VERSION_HEADERS, NO_STORE);
  if (paths.length > limit && page.length > 0) {
    headers.link = `</v2/_catalog?${new URLSearchParams({ n: String(limit), last: page[page.length - 1] })}>; rel="next"`;
  }
  const body = Buffer.from(JSON.stringify({ repositories: page }));
  res.writeHead(200, { ...headers, "content-type": "application/json", "content-length": String(body.length) });
  if (req.method === "HEAD") res.end();
  else res.end(body);
}
