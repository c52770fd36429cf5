import { eventsConfigOf } from "../../config.js";
import { BodyRefusedError, readBody } from "../http/body-reader.js";
import { deleteManifest, findManifest, listReferrers, reachableFromTags } from "../../domains/registry/store/manifests.js";
import { deleteTagByName, findTagByName, findTagsByDigest, listTagNames } from "../../domains/registry/store/tags.js";
import { recordTagDeletions } from "../../domains/events/tag-moves.js";
import { inTransaction } from "../../store/transaction.js";
import { existingRepo, writeEmpty, type RegistryContext, type RegistryRequest, type RegistryResponse } from "./context.js";
import { MAX_MANIFEST_BYTES, MEDIA_TYPE, parseManifest } from "../../domains/registry/manifest.js";
import { checkDigest, pushManifest, repoForPush } from "./push.js";
import { authorizeRepository } from "./registry-auth.js";
import { fail, REGISTRY_VERSION_HEADERS } from "./registry-errors.js";
import { checkTag, DELETE, parseRepositoryName, PULL, PUSH, type RepositoryName } from "./scope.js";
import type { AccessEntry } from "./grant.js";

/**
 * Manifests, tag listing and referrers of the OCI Distribution API:
 * `HEAD|GET|PUT|DELETE /v2/<name>/manifests/<tag or digest>`, `GET /v2/<name>/tags/list`,
 * `GET /v2/<name>/referrers/<digest>`.
 */

/** Most tag names one `tags/list` answer holds. */
export const MAX_TAGS_PER_PAGE = 1000;

const isDigestReference = (reference: string) => reference.startsWith("sha256:");

/** Refuses a digest a tag-limited (free tier) token may not read. */
async function checkReachable(ctx: RegistryContext, entry: AccessEntry, repoUid: string, digest: string, name: RepositoryName): Promise<void> {
  if (entry.tags === undefined) return;
  if (!(await reachableFromTags(ctx.db, repoUid, digest, entry.tags))) {
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
  const repo = await existingRepo(ctx, name);
  let digest = reference;
  if (byDigest) {
    await checkReachable(ctx, entry, repo.uid, digest, name);
  } else {
    const tag = await findTagByName(ctx.db, repo.uid, checkTag(reference));
    if (tag === undefined) fail(404, "MANIFEST_UNKNOWN", `${name.full} has no tag ${reference}`, { tag: reference });
    digest = tag.digest;
  }
  const manifest = await findManifest(ctx.db, repo.uid, digest);
  if (manifest === undefined) fail(404, "MANIFEST_UNKNOWN", `${name.full} holds no manifest ${digest}`, { digest });
  res.writeHead(200, {
    ...REGISTRY_VERSION_HEADERS,
    "content-type": manifest.media_type,
    "content-length": String(manifest.size),
    "docker-content-digest": manifest.digest,
    etag: `"${manifest.digest}"`,
  });
  if (req.method === "HEAD") res.end();
  else res.end(manifest.content);
}

/** `PUT /v2/<name>/manifests/<reference>`: stores the manifest and, for a tag, moves it. */
export async function handleManifestPut(ctx: RegistryContext, req: RegistryRequest, res: RegistryResponse, nameText: string, reference: string): Promise<void> {
  const name = parseRepositoryName(nameText);
  await authorizeRepository(ctx, req, name, PUSH);
  let bytes: Buffer;
  try {
    bytes = Buffer.from(await readBody(req, MAX_MANIFEST_BYTES));
  } catch (error) {
    if (error instanceof BodyRefusedError && error.reason === "too-large") fail(413, "SIZE_INVALID", `a manifest is at most ${MAX_MANIFEST_BYTES} bytes`, { limit: MAX_MANIFEST_BYTES });
    throw error;
  }
  const typePrefix = eventsConfigOf(ctx.config).typePrefix;
  const repo = await repoForPush(ctx.db, name, ctx.now(), typePrefix);
  const contentType = typeof req.headers["content-type"] === "string" ? req.headers["content-type"] : undefined;
  const { digest, manifest } = await pushManifest(ctx.db, ctx.content, repo, { reference, bytes, contentType, now: ctx.now(), eventTypePrefix: typePrefix, repository: name.full });
  const headers: Record<string, string> = { location: `/v2/${name.full}/manifests/${digest}`, "docker-content-digest": digest };
  if (manifest.subject !== undefined) headers["oci-subject"] = manifest.subject.digest;
  writeEmpty(res, 201, headers);
}

/**
 * `DELETE /v2/<name>/manifests/<reference>`: a digest deletes the manifest and its tags; a tag
 * deletes the tag; each deleted tag's `tag.deleted` event in the same transaction. History stays.
 */
export async function handleManifestDelete(ctx: RegistryContext, req: RegistryRequest, res: RegistryResponse, nameText: string, reference: string): Promise<void> {
  const name = parseRepositoryName(nameText);
  await authorizeRepository(ctx, req, name, DELETE);
  const repo = await existingRepo(ctx, name);
  const events = { now: ctx.now(), typePrefix: eventsConfigOf(ctx.config).typePrefix, via: "registry delete" };
  await inTransaction(ctx.db, undefined, async (trx) => {
    if (isDigestReference(reference)) {
      const digest = checkDigest(reference);
      const tags = await findTagsByDigest(trx, repo.uid, digest);
      if (!(await deleteManifest(trx, repo.uid, digest))) fail(404, "MANIFEST_UNKNOWN", `${name.full} holds no manifest ${digest}`, { digest });
      await recordTagDeletions(trx, repo, tags, events);
    } else {
      const tag = await findTagByName(trx, repo.uid, checkTag(reference));
      if (tag === undefined || !(await deleteTagByName(trx, repo.uid, tag.name))) fail(404, "MANIFEST_UNKNOWN", `${name.full} has no tag ${reference}`, { tag: reference });
      await recordTagDeletions(trx, repo, [tag], events);
    }
  });
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
  const repo = await existingRepo(ctx, name);
  const limit = Math.min(n, MAX_TAGS_PER_PAGE);
  const names = limit === 0 ? [] : await listTagNames(ctx.db, repo.uid, { last, limit: limit + 1, only: entry.tags });
  const page = names.slice(0, limit);
  const headers: Record<string, string> = { ...REGISTRY_VERSION_HEADERS, "cache-control": "no-store" };
  if (names.length > limit) {
    const next = new URLSearchParams({ n: String(limit), last: page[page.length - 1] });
    headers.link = `</v2/${name.full}/tags/list?${next}>; rel="next"`;
  }
  const body = Buffer.from(JSON.stringify({ name: name.full, tags: page }));
  res.writeHead(200, { ...headers, "content-type": "application/json", "content-length": String(body.length) });
  res.end(body);
}

/** `GET /v2/<name>/referrers/<digest>[?artifactType=]`: an image index of the manifests whose subject is the digest. */
export async function handleReferrers(ctx: RegistryContext, req: RegistryRequest, res: RegistryResponse, nameText: string, digestText: string, query: URLSearchParams): Promise<void> {
  const name = parseRepositoryName(nameText);
  const entry = await authorizeRepository(ctx, req, name, PULL);
  const digest = checkDigest(digestText);
  const repo = await existingRepo(ctx, name);
  await checkReachable(ctx, entry, repo.uid, digest, name);
  const artifactType = query.get("artifactType") ?? undefined;
  const rows = await listReferrers(ctx.db, repo.uid, digest, artifactType);
  const manifests = rows.map((row) => {
    const { annotations } = parseManifest(row.content, row.media_type);
    return {
      mediaType: row.media_type,
      digest: row.digest,
      size: row.size,
      ...(row.artifact_type === "" ? {} : { artifactType: row.artifact_type }),
      ...(Object.keys(annotations).length === 0 ? {} : { annotations }),
    };
  });
  const body = Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: MEDIA_TYPE.ociIndex, manifests }));
  const headers: Record<string, string> = { ...REGISTRY_VERSION_HEADERS, "content-type": MEDIA_TYPE.ociIndex, "content-length": String(body.length) };
  if (artifactType !== undefined) headers["oci-filters-applied"] = "artifactType";
  res.writeHead(200, headers);
  res.end(body);
}
