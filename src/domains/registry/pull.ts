import type { Kysely } from "kysely";
import type { Database } from "../kit/schema.js";
import type { ContentStore } from "./content/content-store.js";
import { RegistryError } from "./errors.js";
import { MEDIA_TYPE, parseManifest } from "./manifest.js";
import { checkTag, isDigestReference, type RepositoryName } from "./names.js";
import { linkedBlobSize } from "./store/blobs.js";
import { findManifest, listReferrers, reachableFromTags, type ManifestRow } from "./store/manifests.js";
import { findRepoByPath, listRepoPaths, type RepoRow } from "./store/repos.js";
import { readTagHistory } from "./store/tag-history.js";
import { findTagByName, listTagNames } from "./store/tags.js";

/**
 * What a pull reads, independent of HTTP: repositories by name, blobs, manifests by tag or digest,
 * tag names, referrers, a tag's history and the repositories below some groups. Refusals are
 * RegistryErrors.
 */

/** The repository `name` names, or undefined. */
export function findRepository(db: Kysely<Database>, name: RepositoryName): Promise<RepoRow | undefined> {
  return findRepoByPath(db, name.organization, name.image);
}

/** The error of an operation on repository `name`, which does not exist. */
export function unknownRepository(name: RepositoryName): RegistryError {
  return new RegistryError("NAME_UNKNOWN", `repository ${name.full} is not known to the registry`, { name: name.full });
}

/** The size of blob `digest` of the repo, when the repo holds it and its bytes are stored; throws BLOB_UNKNOWN otherwise. */
export async function blobSize(db: Kysely<Database>, content: ContentStore, repo: RepoRow, name: RepositoryName, digest: string): Promise<number> {
  const size = await linkedBlobSize(db, repo.uid, digest);
  const stored = size === undefined ? undefined : await content.size(digest);
  if (size === undefined || stored !== size) throw new RegistryError("BLOB_UNKNOWN", `blob ${digest} is not in ${name.full}`, { digest });
  return size;
}

/**
 * A URL at which the client may fetch blob `digest` itself for `expiresInSeconds`, or undefined
 * when the content store gives none (the registry host then sends the bytes). No check is made here:
 * call it only once the caller may pull and `blobSize` found the blob in the repo.
 */
export async function blobRedirectUrl(content: ContentStore, digest: string, expiresInSeconds: number): Promise<string | undefined> {
  return content.redirectUrl?.(digest, expiresInSeconds);
}

/**
 * The stored manifest `reference` names in the repo: a digest (already checked), or a
 * tag's current one. Throws TAG_INVALID, or MANIFEST_UNKNOWN when there is no such tag or manifest.
 */
export async function resolveManifest(db: Kysely<Database>, repo: RepoRow, name: RepositoryName, reference: string): Promise<ManifestRow> {
  let digest = reference;
  if (!isDigestReference(reference)) {
    const tag = await findTagByName(db, repo.uid, checkTag(reference));
    if (tag === undefined) throw new RegistryError("MANIFEST_UNKNOWN", `${name.full} has no tag ${reference}`, { tag: reference });
    digest = tag.digest;
  }
  const manifest = await findManifest(db, repo.uid, digest);
  if (manifest === undefined) throw new RegistryError("MANIFEST_UNKNOWN", `${name.full} holds no manifest ${digest}`, { digest });
  return manifest;
}

/** True when `digest` is, or is named by an index that is, a digest one of `tags` of the repo has pointed to. */
export function isReachableFromTags(db: Kysely<Database>, repo: RepoRow, digest: string, tags: string[]): Promise<boolean> {
  return reachableFromTags(db, repo.uid, digest, tags);
}

/** Tag names of the repo in byte order after `last`, at most `limit`, only those of `only` when given. */
export function tagNames(db: Kysely<Database>, repo: RepoRow, options: { last?: string; limit: number; only?: string[] }): Promise<string[]> {
  return listTagNames(db, repo.uid, options);
}

/** The referrers of a digest nothing refers to, or of any digest in a repository not there yet: an empty image index. */
export function emptyReferrersIndex(): { schemaVersion: number; mediaType: typeof MEDIA_TYPE.ociIndex; manifests: never[] } {
  return { schemaVersion: 2, mediaType: MEDIA_TYPE.ociIndex, manifests: [] };
}

/** An OCI image index of the repo's manifests whose subject is `digest` (of `artifactType` when given), by digest. */
export async function referrersIndex(db: Kysely<Database>, repo: RepoRow, digest: string, artifactType?: string) {
  const rows = await listReferrers(db, repo.uid, digest, artifactType);
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
  return { schemaVersion: 2, mediaType: MEDIA_TYPE.ociIndex, manifests };
}

/**
 * The digests tag `tag` of the repo has pointed to, oldest first, within the inclusive window, at
 * most `limit`: the store's rows as read (its kept results stay recognisable).
 */
export function tagHistory(db: Kysely<Database>, repo: RepoRow, tag: string, window: { start?: number; end?: number; limit: number }) {
  return readTagHistory(db, repo.uid, tag, window);
}

/** Registry paths (`<organization>/<repo name>`) of the repos below the groups `roots`, in byte order after `after`, at most `limit`. */
export function repositoryPaths(db: Kysely<Database>, roots: string[], options: { after?: string; limit: number }): Promise<string[]> {
  return listRepoPaths(db, roots, options);
}
