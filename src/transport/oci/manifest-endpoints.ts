import { checkDigest, checkTag, isDigestReference, MAX_MANIFEST_BYTES, MEDIA_TYPE, type Repository } from "../../domains/registry/index.js";
import { BodyRefusedError, readBody } from "../http/body-reader.js";
import { matchesIfNoneMatch } from "./conditional.js";
import { referenceName, writeEmpty, writeNotModified, type RegistryContext, type RegistryRequest, type RegistryResponse } from "./context.js";
import { fail, NO_STORE, REGISTRY_VERSION_HEADERS } from "./registry-errors.js";
import type { AccessEntry } from "./grant.js";
import type { RepositoryCall } from "./repository-call.js";

/**
 * Manifests, tag listing and referrers of the OCI Distribution API:
 * `HEAD|GET|PUT|DELETE /v2/<name>/manifests/<tag or digest>`, `GET /v2/<name>/tags/list`,
 * `GET /v2/<name>/referrers/<digest>`. Each is handed its repository resolved and the caller
 * authorized (`answerOnRepository`).
 */

/** Most tag names one `tags/list` answer holds. */
export const MAX_TAGS_PER_PAGE = 1000;

/** Refuses a digest a tag-limited (free tier) token may not read. */
async function checkReachable(entry: AccessEntry, repo: Repository, digest: string): Promise<void> {
  if (entry.tags === undefined) return;
  if (!(await repo.isReachableFromTags(digest, entry.tags))) {
    fail(403, "DENIED", `this token only reads the images of the tags ${entry.tags.join(", ")} of ${repo.name.full}`, { name: repo.name.full, digest });
  }
}

/**
 * Applies the repository's trust policy to a pull of `manifest` (a lookup: verification ran at
 * push and key creation): under `enforce` an unverified manifest is refused, 403 `DENIED` naming
 * the policy; under `warn` it is counted and served.
 */
async function checkTrust(ctx: RegistryContext, repo: Repository, manifest: Awaited<ReturnType<Repository["resolveManifest"]>>, reference: string): Promise<void> {
  const trust = await repo.pullTrust(manifest, reference);
  if (trust.verdict === "allowed") return;
  ctx.metrics.unverifiedPull(trust.mode);
  if (trust.mode === "enforce") {
    fail(403, "DENIED", `the trust policy (enforce) of group ${trust.policyGroup} refuses ${manifest.digest} of ${repo.name.full}: no trusted key verified a signature of it`, {
      name: repo.name.full,
      digest: manifest.digest,
      policy: { group: trust.policyGroup, mode: "enforce" },
    });
  }
}

/** `HEAD|GET /v2/<name>/manifests/<reference>`: the stored bytes, with their media type and digest. */
export async function handleManifestGet(ctx: RegistryContext, req: RegistryRequest, res: RegistryResponse, { repo, access: entry }: RepositoryCall, reference: string): Promise<void> {
  const { name } = repo;
  const byDigest = isDigestReference(reference);
  if (byDigest) {
    checkDigest(reference);
  } else if (entry.tags !== undefined && !entry.tags.includes(checkTag(reference))) {
    fail(403, "DENIED", `this token only grants the tags ${entry.tags.join(", ")} of ${name.full}`, { name: name.full, tag: reference });
  }
  if (byDigest) await checkReachable(entry, repo, reference);
  const manifest = await repo.resolveManifest(reference);
  await checkTrust(ctx, repo, manifest, reference);
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
export async function handleManifestPut(ctx: RegistryContext, req: RegistryRequest, res: RegistryResponse, { repo, access }: RepositoryCall, reference: string): Promise<void> {
  const { name } = repo;
  let bytes: Buffer;
  try {
    bytes = Buffer.from(await readBody(req, MAX_MANIFEST_BYTES));
  } catch (error) {
    if (error instanceof BodyRefusedError && error.reason === "too-large") fail(413, "SIZE_INVALID", `a manifest is at most ${MAX_MANIFEST_BYTES} bytes`, { limit: MAX_MANIFEST_BYTES });
    throw error;
  }
  const contentType = typeof req.headers["content-type"] === "string" ? req.headers["content-type"] : undefined;
  const { digest, manifest } = await repo.pushManifest({ reference, bytes, contentType, actor: access.subject });
  if (digest !== reference) ctx.note.change = { action: "registry.manifest.put", resource: `${referenceName(name.full, reference)}@${digest}` };
  const headers: Record<string, string> = { location: `/v2/${name.full}/manifests/${digest}`, "docker-content-digest": digest };
  if (manifest.subject !== undefined) headers["oci-subject"] = manifest.subject.digest;
  writeEmpty(res, 201, headers);
}

/**
 * `DELETE /v2/<name>/manifests/<reference>`: a digest deletes the manifest and its tags; a tag
 * deletes the tag; each deleted tag's `tag.deleted` event in the same transaction. History stays.
 * Audited as `registry.manifest.delete` of `<repo>@<digest>` or `registry.tag.delete` of `<repo>:<tag>`.
 */
export async function handleManifestDelete(ctx: RegistryContext, req: RegistryRequest, res: RegistryResponse, { repo, access }: RepositoryCall, reference: string): Promise<void> {
  await repo.deleteReference(reference, access.subject);
  writeEmpty(res, 202);
}

/** `GET /v2/<name>/tags/list?n=&last=`: tag names in byte order, a page at a time with a `Link` to the next. */
export async function handleTagsList(ctx: RegistryContext, req: RegistryRequest, res: RegistryResponse, { repo, access: entry }: RepositoryCall, query: URLSearchParams): Promise<void> {
  const { name } = repo;
  const nText = query.get("n");
  const n = nText === null ? MAX_TAGS_PER_PAGE : Number(nText);
  if (!/^\d{1,9}$/.test(nText ?? "0")) fail(400, "INVALID_ARGUMENT", "n must be a non-negative integer", { n: nText });
  const last = query.get("last") ?? undefined;
  const limit = Math.min(n, MAX_TAGS_PER_PAGE);
  await repo.get(); // NAME_UNKNOWN for a repository that does not exist, whatever `n` asks
  const names = limit === 0 ? [] : await repo.tagNames({ last, limit: limit + 1, only: entry.tags });
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
export async function handleReferrers(ctx: RegistryContext, req: RegistryRequest, res: RegistryResponse, { repo, access: entry }: RepositoryCall, digestText: string, query: URLSearchParams): Promise<void> {
  const digest = checkDigest(digestText);
  await checkReachable(entry, repo, digest);
  const artifactType = query.get("artifactType") ?? undefined;
  const body = Buffer.from(JSON.stringify(await repo.referrersIndex(digest, artifactType)));
  const headers: Record<string, string> = Object.assign({ "content-type": MEDIA_TYPE.ociIndex, "content-length": String(body.length) }, REGISTRY_VERSION_HEADERS);
  if (artifactType !== undefined) headers["oci-filters-applied"] = "artifactType";
  res.writeHead(200, headers);
  res.end(body);
}
