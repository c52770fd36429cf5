import { eventsConfigOf } from "../../config.js";
import {
  checkDigest,
  checkTag,
  deleteReference,
  existingRepository,
  isDigestReference,
  isReachableFromTags,
  MAX_MANIFEST_BYTES,
  MEDIA_TYPE,
  parseRepositoryName,
  pushManifest,
  referrersIndex,
  repoForPush,
  resolveManifest,
  tagNames,
  type RepoRow,
  type RepositoryName,
} from "../../domains/registry/index.js";
import { BodyRefusedError, readBody } from "../http/body-reader.js";
import { matchesIfNoneMatch } from "./conditional.js";
import { referenceName, writeEmpty, writeNotModified, type RegistryContext, type RegistryRequest, type RegistryResponse } from "./context.js";
import { authorizeRepository } from "./registry-auth.js";
import { fail, NO_STORE, REGISTRY_VERSION_HEADERS } from "./registry-errors.js";
import { DELETE, PULL, PUSH } from "./scope.js";
import type { AccessEntry } from "./grant.js";

/**
 * Manifests, tag listing and referrers of the OCI Distribution API:
 * `HEAD|GET|PUT|DELETE /v2/<name>/manifests/<tag or digest>`, `GET /v2/<name>/tags/list`,
 * `GET /v2/<name>/referrers/<digest>`.
 */

/** Most tag names one `tags/list` answer holds. */
export const MAX_TAGS_PER_PAGE = 1000;

/** Refuses a digest a tag-limited (free tier) token may not read. */
async function checkReachable(ctx: RegistryContext, entry: AccessEntry, repo: RepoRow, digest: string, name: RepositoryName): Promise<void> {
  if (entry.tags === undefined) return;
  if (!(await isReachableFromTags(ctx.db, repo, digest, entry.tags))) {
    fail(403, "DENIED", `this token only reads the images of the tags ${entry.tags.join(", ")} of ${name.full}`, { name: name.full, digest });
  }
}

/** `HEAD|GET /v2/<name>/manifests/<reference>`: the stored bytes, with their media type and digest. */
export async function handleManifestGet(ctx: RegistryContext, req: RegistryRequest, res: RegistryResponse, nameText: string, reference: string): Promise<void> {
  const name = parseRepositoryName(nameText);
  const entry = await authorizeRepository(ctx, req, name, PULL);
  const byDigest = isDigestReference(reference);
  if (byDigest) {
    checkDigest(reference);
  } else if (entry.tags !== undefined && !entry.tags.includes(checkTag(reference))) {
    fail(403, "DENIED", `this token only grants the tags ${entry.tags.join(", ")} of ${name.full}`, { name: name.full, tag: reference });
  }
  const repo = await existingRepository(ctx.db, name);
  if (byDigest) await checkReachable(ctx, entry, repo, reference, name);
  const manifest = await resolveManifest(ctx.db, repo, name, reference);
  const identity = { "docker-content-digest": manifest.digest, etag: `"${manifest.digest}"` };
  if (matchesIfNoneMatch(req, manifest.digest)) return writeNotModified(res, identity);
  res.writeHead(200, Object.assign({ "content-type": manifest.media_type, "content-length": String(manifest.size) }, REGISTRY_VERSION_HEADERS, identity));
  if (req.method === "HEAD") res.end();
  else res.end(manifest.content);
}

/**
 * `PUT /v2/<name>/manifests/<reference>`: stores the manifest and, for a tag, moves it. Audited as
 * `registry.manifest.put` of `<repo>:<tag>` (once pushed, `<repo>:<tag>@<digest>`) or `<repo>@<digest>`.
 */
export async function handleManifestPut(ctx: RegistryContext, req: RegistryRequest, res: RegistryResponse, nameText: string, reference: string): Promise<void> {
  const name = parseRepositoryName(nameText);
  const change = { action: "registry.manifest.put", resource: referenceName(name.full, reference) } as const;
  ctx.note.change = change;
  const { subject } = await authorizeRepository(ctx, req, name, PUSH);
  let bytes: Buffer;
  try {
    bytes = Buffer.from(await readBody(req, MAX_MANIFEST_BYTES));
  } catch (error) {
    if (error instanceof BodyRefusedError && error.reason === "too-large") fail(413, "SIZE_INVALID", `a manifest is at most ${MAX_MANIFEST_BYTES} bytes`, { limit: MAX_MANIFEST_BYTES });
    throw error;
  }
  const typePrefix = eventsConfigOf(ctx.config).typePrefix;
  const repo = await repoForPush(ctx.db, name, ctx.now(), typePrefix, subject);
  const contentType = typeof req.headers["content-type"] === "string" ? req.headers["content-type"] : undefined;
  const { digest, manifest } = await pushManifest(ctx.db, ctx.content, repo, { reference, bytes, contentType, now: ctx.now(), eventTypePrefix: typePrefix, repository: name.full, actor: subject });
  if (digest !== reference) ctx.note.change = { ...change, resource: `${change.resource}@${digest}` };
  const headers: Record<string, string> = { location: `/v2/${name.full}/manifests/${digest}`, "docker-content-digest": digest };
  if (manifest.subject !== undefined) headers["oci-subject"] = manifest.subject.digest;
  writeEmpty(res, 201, headers);
}

/**
 * `DELETE /v2/<name>/manifests/<reference>`: a digest deletes the manifest and its tags; a tag
 * deletes the tag; each deleted tag's `tag.deleted` event in the same transaction. History stays.
 * Audited as `registry.manifest.delete` of `<repo>@<digest>` or `registry.tag.delete` of `<repo>:<tag>`.
 */
export async function handleManifestDelete(ctx: RegistryContext, req: RegistryRequest, res: RegistryResponse, nameText: string, reference: string): Promise<void> {
  const name = parseRepositoryName(nameText);
  const resource = referenceName(name.full, reference);
  ctx.note.change = { action: resource.includes("@") ? "registry.manifest.delete" : "registry.tag.delete", resource };
  const { subject } = await authorizeRepository(ctx, req, name, DELETE);
  const repo = await existingRepository(ctx.db, name);
  await deleteReference(ctx.db, repo, name, reference, { now: ctx.now(), typePrefix: eventsConfigOf(ctx.config).typePrefix, actor: subject });
  writeEmpty(res, 202);
}

/** `GET /v2/<name>/tags/list?n=&last=`: tag names in byte order, a page at a time with a `Link` to the next. */
export async function handleTagsList(ctx: RegistryContext, req: RegistryRequest, res: RegistryResponse, nameText: string, query: URLSearchParams): Promise<void> {
  const name = parseRepositoryName(nameText);
  const entry = await authorizeRepository(ctx, req, name, PULL);
  const nText = query.get("n");
  const n = nText === null ? MAX_TAGS_PER_PAGE : Number(nText);
  if (!/^\d{1,9}$/.test(nText ?? "0")) fail(400, "INVALID_ARGUMENT", "n must be a non-negative integer", { n: nText });
  const last = query.get("last") ?? undefined;
  const repo = await existingRepository(ctx.db, name);
  const limit = Math.min(n, MAX_TAGS_PER_PAGE);
  const names = limit === 0 ? [] : await tagNames(ctx.db, repo, { last, limit: limit + 1, only: entry.tags });
  const page = names.slice(0, limit);
  const headers: Record<string, string> = Object.assign({}, REGISTRY_VERSION_HEADERS, NO_STORE);
  if (names.length > limit) {
    const next = new URLSearchParams({ n: String(limit), last: page[page.length - 1] });
    headers.link = `</v2/${name.full}/tags/list?${next}>; rel="next"`;
  }
  const body = Buffer.from(JSON.stringify({ name: name.full, tags: page }));
  res.writeHead(200, Object.assign(headers, { "content-type": "application/json", "content-length": String(body.length) }));
  res.end(body);
}

/** `GET /v2/<name>/referrers/<digest>[?artifactType=]`: an image index of the manifests whose subject is the digest. */
export async function handleReferrers(ctx: RegistryContext, req: RegistryRequest, res: RegistryResponse, nameText: string, digestText: string, query: URLSearchParams): Promise<void> {
  const name = parseRepositoryName(nameText);
  const entry = await authorizeRepository(ctx, req, name, PULL);
  const digest = checkDigest(digestText);
  const repo = await existingRepository(ctx.db, name);
  await checkReachable(ctx, entry, repo, digest, name);
  const artifactType = query.get("artifactType") ?? undefined;
  const body = Buffer.from(JSON.stringify(await referrersIndex(ctx.db, repo, digest, artifactType)));
  const headers: Record<string, string> = Object.assign({ "content-type": MEDIA_TYPE.ociIndex, "content-length": String(body.length) }, REGISTRY_VERSION_HEADERS);
  if (artifactType !== undefined) headers["oci-filters-applied"] = "artifactType";
  res.writeHead(200, headers);
  res.end(body);
}
