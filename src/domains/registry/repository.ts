import type { Readable, Writable } from "node:stream";
import type { Kysely } from "kysely";
import type { Database } from "../kit/schema.js";
import type { ContentStore } from "./content/content-store.js";
import { deleteReference } from "./deletion.js";
import type { Manifest } from "./manifest.js";
import type { RepositoryName } from "./names.js";
import { blobRedirectUrl, blobSize, emptyReferrersIndex, findRepository, isReachableFromTags, referrersIndex, resolveManifest, tagHistory, tagNames, unknownRepository } from "./pull.js";
import { createRepoForPush, pushManifest } from "./push.js";
import type { ManifestRow } from "./store/manifests.js";
import type { RepoRow } from "./store/repos.js";
import { pullTrust, type PullTrust } from "./trust/pull-policy.js";
import { appendUpload, cancelUpload, deleteBlob, finishUpload, mountBlob, startUpload, uploadSize } from "./uploads.js";

/** What a repository handle's operations run against: the store, the blobs' bytes, the clock (epoch ms), the events' type prefix. */
export interface RegistryParts {
  db: Kysely<Database>;
  content: ContentStore;
  now: () => number;
  eventTypePrefix: string;
}

/**
 * One repository, by name, and the registry's operations on it, bound to the store and the
 * content. Its row is read at most once, when an operation (or `find`) first needs it; a handle
 * lives for one request. Operations on a repository that does not exist throw NAME_UNKNOWN,
 * except `createIfMissing` and `pushManifest`, which create it first. Every refusal is a
 * RegistryError (the operations' own are documented where they are written: pull.ts, push.ts,
 * uploads.ts, deletion.ts).
 */
export interface Repository {
  readonly name: RepositoryName;
  /** The repository's row, or undefined when it does not exist. */
  find(): Promise<RepoRow | undefined>;
  /** The repository's row; throws NAME_UNKNOWN when it does not exist. */
  get(): Promise<RepoRow>;
  /** The row, the repository created in its organization when missing (with its `repo.created` event by `actor` via `via`, by default a push). */
  createIfMissing(actor: string, via?: string): Promise<RepoRow>;

  /** The size of blob `digest` of the repo; throws BLOB_UNKNOWN when it does not hold it or its bytes are gone. */
  blobSize(digest: string): Promise<number>;
  /** A URL the client may fetch blob `digest` at for `expiresInSeconds`, or undefined; only after `blobSize` found it. */
  blobRedirectUrl(digest: string, expiresInSeconds: number): Promise<string | undefined>;
  /** Writes bytes `range` (inclusive) of blob `digest` to `out`; only after `blobSize` found it. */
  writeBlob(digest: string, range: { start: number; end: number }, out: Writable): Promise<void>;
  /** The manifest a digest (already checked) or a tag names. */
  resolveManifest(reference: string): Promise<ManifestRow>;
  /**
   * What the repository's trust policy says of a pull of `manifest` (resolved from `reference`):
   * a lookup of the verifications recorded at push and key creation (trust/pull-policy.ts).
   */
  pullTrust(manifest: ManifestRow, reference: string): Promise<PullTrust>;
  /** True when `digest` is, or is named by an index that is, a digest one of `tags` has pointed to. */
  isReachableFromTags(digest: string, tags: string[]): Promise<boolean>;
  /** Tag names in byte order after `last`, at most `limit`, only those of `only` when given. */
  tagNames(options: { last?: string; limit: number; only?: string[] }): Promise<string[]>;
  /** An OCI image index of the manifests whose subject is `digest` (of `artifactType` when given); empty when the repository is not there yet. */
  referrersIndex(digest: string, artifactType?: string): ReturnType<typeof referrersIndex>;
  /** The digests `tag` has pointed to, oldest first, within the inclusive window, at most `limit`. */
  tagHistory(tag: string, window: { start?: number; end?: number; limit: number }): ReturnType<typeof tagHistory>;

  /** Stores a pushed manifest (creating the repo when missing) and, for a tag, moves the tag, with the push's events by `actor`. */
  pushManifest(push: { reference: string; bytes: Buffer; contentType?: string; actor: string }): Promise<{ digest: string; manifest: Manifest }>;
  /** Deletes the manifest (and its tags) a digest names, or the tag a tag names, with each tag's `tag.deleted` event by `actor`. */
  deleteReference(reference: string, actor: string): Promise<void>;

  /** Starts an empty upload; returns its id. */
  startUpload(): Promise<string>;
  /** The bytes upload `id` of the repo holds; throws BLOB_UPLOAD_UNKNOWN when the repo has no such upload. */
  uploadSize(id: string): Promise<number>;
  /** Appends `source` to upload `id` (at most `maxBytes` in all; exactly `length` bytes when given); returns its new size. */
  appendUpload(id: string, source: Readable, maxBytes: number, length?: number): Promise<number>;
  /** Forgets upload `id`, its row and its bytes. */
  cancelUpload(id: string): Promise<void>;
  /** Stops the repository serving blob `digest` (its bytes go when nothing names them); false when it did not serve it. */
  deleteBlob(digest: string): Promise<boolean>;
  /** Turns upload `id` into blob `digest` of the repo; returns its size. */
  finishUpload(id: string, digest: string): Promise<number>;
  /** Links blob `digest` of `source` (this repo: confirms it holds it) into the repo; false when `source` does not exist or hold it. */
  mountBlob(source: Repository, digest: string): Promise<boolean>;
}

/** The handle of repository `name` (nothing is read until an operation needs the row). */
export function repositoryHandle(parts: RegistryParts, name: RepositoryName): Repository {
  const { db, content, now } = parts;
  let row: Promise<RepoRow | undefined> | undefined;
  const find = () => (row ??= findRepository(db, name));
  const existing = async (): Promise<RepoRow> => {
    const found = await find();
    if (found === undefined) throw unknownRepository(name);
    return found;
  };
  const createIfMissing = async (actor: string, via?: string): Promise<RepoRow> => {
    const found = await find();
    if (found !== undefined) return found;
    const created = await createRepoForPush(db, name, now(), parts.eventTypePrefix, actor, via);
    row = Promise.resolve(created);
    return created;
  };

  return {
    name,
    find,
    get: existing,
    createIfMissing,
    blobSize: async (digest) => blobSize(db, content, await existing(), name, digest),
    blobRedirectUrl: (digest, expiresInSeconds) => blobRedirectUrl(content, digest, expiresInSeconds),
    writeBlob: (digest, range, out) => content.writeTo(digest, range, out),
    resolveManifest: async (reference) => resolveManifest(db, await existing(), name, reference),
    pullTrust: async (manifest, reference) => pullTrust(db, await existing(), manifest, reference),
    isReachableFromTags: async (digest, tags) => isReachableFromTags(db, await existing(), digest, tags),
    tagNames: async (options) => tagNames(db, await existing(), options),
    referrersIndex: async (digest, artifactType) => {
      const found = await find();
      return found === undefined ? emptyReferrersIndex() : referrersIndex(db, found, digest, artifactType);
    },
    tagHistory: async (tag, window) => tagHistory(db, await existing(), tag, window),
    pushManifest: async ({ actor, ...push }) =>
      pushManifest(db, content, await createIfMissing(actor), { ...push, now: now(), eventTypePrefix: parts.eventTypePrefix, repository: name.full, actor }),
    deleteReference: async (reference, actor) => deleteReference(db, await existing(), name, reference, { now: now(), typePrefix: parts.eventTypePrefix, actor }),
    startUpload: async () => startUpload(db, content, (await existing()).uid, now()),
    uploadSize: async (id) => uploadSize(db, content, (await existing()).uid, name, id),
    appendUpload: (id, source, maxBytes, length) => appendUpload(content, id, source, maxBytes, length),
    cancelUpload: (id) => cancelUpload(db, content, id),
    deleteBlob: async (digest) => deleteBlob(db, (await existing()).uid, digest),
    finishUpload: async (id, digest) => finishUpload(db, content, (await existing()).uid, id, digest, now()),
    async mountBlob(source, digest) {
      const from = await source.find();
      if (from === undefined) return false;
      return mountBlob(db, from.uid, (await existing()).uid, digest, now());
    },
  };
}
