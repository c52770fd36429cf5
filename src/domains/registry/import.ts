import { createReadStream } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import type { Kysely } from "kysely";
import { ApiError, invalidField, notFound } from "../../aip/errors.js";
import { defaultEventsConfig } from "../../config.js";
import type { Database, Db } from "../kit/schema.js";
import { inTransaction } from "../../store/transaction.js";
import { findOrganizationByName } from "../iam/index.js";
import { DigestMismatch, type ContentStore } from "./content/content-store.js";
import { RegistryError } from "./errors.js";
import { recordRepoCreated } from "./events.js";
import { queueReportWork } from "./image-inventory.js";
import { MissingReferences, recordManifest } from "./images.js";
import { DIGEST_RULE, digestAlgorithm, digestHex, digestOf } from "./digests.js";
import { DIGEST, InvalidManifest, MAX_MANIFEST_BYTES, parseManifest, platformOfConfig, sha256Digest, type Descriptor, type Manifest } from "./manifest.js";
import { isTag, parseRepositoryName, TAG_RULE, type RepositoryName } from "./names.js";
import { linkBlob, recordBlob, touchBlobs } from "./store/blobs.js";
import { findOrInsertRepo } from "./store/repos.js";
import { moveTagWithEvent } from "./tag-moves.js";

/**
 * `platform-api registry import`: loads manifests into a repo from OCI image layout
 * directories (`oci-layout`, `index.json`, `blobs/sha256/...`) or manifest JSON files,
 * and points tags at them, in one transaction: all of it is stored or none. The config
 * and layer blobs a layout holds are copied into the content store first (a blob no
 * transaction records is invisible), so imported images can be pulled. Blobs are streamed
 * from their files and hashed on the way, never held in memory whole.
 */

/** The annotation an OCI layout's index.json names a tag with. */
export const REF_NAME = "org.opencontainers.image.ref.name";

export interface ImportOptions {
  /** `<organization>/<repo name>`. */
  repository: string;
  /** Files or directories, in order: an index's children must come before it or be stored already. */
  paths: string[];
  /** Tag for the single top-level manifest of the inputs (overrides layout ref names). */
  tag?: string;
  /** Group uid that holds the repo when it must be created; default the organization. */
  group?: string;
  now: number;
  /** Where the layouts' blobs are copied; without it only manifests are imported. */
  content?: ContentStore;
  /** The first segments of the tag events' types; default `defaultEventsConfig.typePrefix`. */
  eventTypePrefix?: string;
  /** Told how far the copy of blobs into `content` is, after each chunk (and once per blob already stored). */
  onProgress?: (progress: CopyProgress) => void;
}

export interface CopyProgress {
  /** Bytes copied or found already stored, of `totalBytes`. */
  bytes: number;
  totalBytes: number;
  /** Blobs done, of `totalBlobs` (distinct digests). */
  blobs: number;
  totalBlobs: number;
}

export interface ImportResult {
  repo: { uid: string; name: string; created: boolean };
  manifests: Array<{ digest: string; mediaType: string; kind: string; written: boolean }>;
  /** Config and layer blobs copied into the content store. */
  blobs: number;
  tags: Array<{ name: string; digest: string }>;
}

interface Loaded {
  bytes: Buffer;
  manifest: Manifest;
  platform?: { architecture: string; os: string };
  /** The digest the layout names it by (sha256 or sha512); a lone manifest file: its sha256. */
  digest?: string;
}

/** A config or layer blob a layout holds: its file is read when it is copied, not before. */
interface LayoutBlob {
  digest: string;
  size: number;
  path: string;
}

/** Config blobs up to this size are read for the image's platform (as pushes do). */
const MAX_CONFIG_BYTES = 1024 * 1024;

interface Source {
  /** Manifests in the order to store them: children before their index. */
  manifests: Loaded[];
  /** Config and layer blobs the layout holds. */
  blobs: LayoutBlob[];
  /** Top-level manifests with the tag a layout gives them, if any. */
  tops: Array<{ digest: string; ref?: string }>;
}

function importError(message: string): ApiError {
  return invalidField("path", message);
}

/** The file of blob `digest` in `layout`, undefined when the layout leaves it out; its size must be `expectedSize`. */
async function blobFile(layout: string, digest: string, expectedSize?: number): Promise<LayoutBlob | undefined> {
  if (!DIGEST.test(digest)) throw importError(`${layout}: unsupported digest ${digest} (${DIGEST_RULE})`);
  const path = join(layout, "blobs", digestAlgorithm(digest), digestHex(digest));
  let size: number;
  try {
    size = (await stat(path)).size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  if (expectedSize !== undefined && size !== expectedSize) throw importError(`${layout}: blob ${digest} does not match its digest or size`);
  return { digest, size, path };
}

/** Reads a small blob (a manifest, a config of at most `limit` bytes) whole and checks its digest. */
async function readBlob(layout: string, digest: string, expectedSize: number | undefined, limit: number): Promise<Buffer | undefined> {
  const file = await blobFile(layout, digest, expectedSize);
  if (file === undefined) return undefined;
  if (file.size > limit) throw importError(`${layout}: blob ${digest} is ${file.size} bytes; a manifest is at most ${limit}`);
  const bytes = await readFile(file.path);
  if (digestOf(bytes, digestAlgorithm(digest)) !== digest) throw importError(`${layout}: blob ${digest} does not match its digest or size`);
  return bytes;
}

/** Reads an OCI image layout: every manifest reachable from index.json that the layout holds. */
async function readLayout(layout: string): Promise<Source> {
  const index = await readFile(join(layout, "index.json")).catch(() => undefined);
  if (index === undefined) throw importError(`${layout}: not an OCI image layout (no index.json)`);
  const top = parseManifest(index, undefined);
  if (top.kind !== "index") throw importError(`${layout}: index.json is not an image index`);
  const source: Source = { manifests: [], blobs: [], tops: [] };
  const seen = new Set<string>();

  const visit = async (d: Descriptor, required: boolean): Promise<void> => {
    if (seen.has(d.digest)) return;
    seen.add(d.digest);
    const bytes = await readBlob(layout, d.digest, d.size, MAX_MANIFEST_BYTES);
    if (bytes === undefined) {
      if (required) throw importError(`${layout}: blob ${d.digest} named by index.json is missing`);
      return; // an index entry the layout leaves out (e.g. a platform not copied): stored indexes are checked later
    }
    const manifest = parseManifest(bytes, d.mediaType);
    let platform: Loaded["platform"];
    if (manifest.kind === "index") {
      for (const child of manifest.manifests) await visit(child, false);
    } else {
      for (const blob of [manifest.config, ...manifest.layers]) {
        const file = await blobFile(layout, blob.digest, blob.size);
        if (file === undefined) continue;
        source.blobs.push(file);
        if (blob === manifest.config && file.size <= MAX_CONFIG_BYTES) platform = platformOfConfig((await readBlob(layout, blob.digest, blob.size, MAX_CONFIG_BYTES))!);
      }
    }
    source.manifests.push({ bytes, manifest, platform, digest: d.digest });
  };

  for (const d of top.manifests) {
    await visit(d, true);
    source.tops.push({ digest: d.digest, ref: d.annotations?.[REF_NAME] });
  }
  return source;
}

async function readSource(path: string): Promise<Source> {
  const info = await stat(path).catch(() => undefined);
  if (info === undefined) throw importError(`${path}: no such file or directory`);
  if (info.isDirectory()) return readLayout(path);
  if (info.size > MAX_MANIFEST_BYTES) throw importError(`${path}: ${info.size} bytes; a manifest is at most ${MAX_MANIFEST_BYTES}`);
  const bytes = await readFile(path);
  return { manifests: [{ bytes, manifest: parseManifest(bytes) }], blobs: [], tops: [{ digest: sha256Digest(bytes) }] };
}

async function repoFor(db: Db, repository: string, group: string | undefined, now: number) {
  let name: RepositoryName;
  try {
    name = parseRepositoryName(repository);
  } catch (error) {
    if (error instanceof RegistryError) throw invalidField("repo", `${error.message}: ${repository}`);
    throw error;
  }
  const organization = await findOrganizationByName(db, name.organization);
  if (organization === undefined) throw notFound("organization", name.organization);
  const holder = group ?? organization.uid;
  if (holder !== organization.uid && !holder.startsWith(`${organization.uid}/`)) throw invalidField("group", `must be a group of ${name.organization}`);
  return findOrInsertRepo(db, organization, name.image, holder, now);
}

/** Imports the inputs; throws INVALID_ARGUMENT (bad input, nothing stored) or NOT_FOUND (no such organization or group). */
export async function importImages(store: { db: Kysely<Database> }, options: ImportOptions): Promise<ImportResult> {
  const sources: Source[] = [];
  try {
    for (const path of options.paths) sources.push(await readSource(path));
  } catch (error) {
    if (error instanceof InvalidManifest) throw importError(error.message);
    throw error;
  }
  const tops = sources.flatMap((s) => s.tops);
  if (options.tag !== undefined) {
    if (!isTag(options.tag)) throw invalidField("tag", TAG_RULE);
    if (tops.length !== 1) throw invalidField("tag", `--tag needs exactly one top-level manifest; the inputs hold ${tops.length}`);
  }

  const blobs = options.content === undefined ? [] : sources.flatMap((s) => s.blobs);
  // Marked used before their files are written, as an upload is (docs/decisions.md, "Registry host").
  await touchBlobs(store.db, blobs.map((b) => b.digest), options.now);
  if (options.content !== undefined) await copyBlobs(options.content, blobs, options.onProgress);

  return inTransaction(store.db, undefined, async (trx) => {
    const { row: repo, created } = await repoFor(trx, options.repository, options.group, options.now);
    const typePrefix = options.eventTypePrefix ?? defaultEventsConfig.typePrefix;
    if (created) await recordRepoCreated(trx, repo, { now: options.now, typePrefix, via: "registry import" });
    const result: ImportResult = { repo: { uid: repo.uid, name: repo.name, created }, manifests: [], blobs: blobs.length, tags: [] };
    for (const { digest, size } of blobs) {
      await recordBlob(trx, digest, size, options.now);
      await linkBlob(trx, repo.uid, digest);
    }
    for (const loaded of sources.flatMap((s) => s.manifests)) {
      let recorded;
      try {
        // Blobs are optional: a manifest file comes without them.
        recorded = await recordManifest(trx, repo.uid, loaded.bytes, loaded.manifest, { digest: loaded.digest, platform: loaded.platform, requireBlobs: false, now: options.now });
      } catch (error) {
        if (error instanceof MissingReferences) throw importError(`an index names manifests that are neither imported nor stored: ${error.missing.join(", ")}`);
        throw error;
      }
      if (recorded.written) await queueReportWork(trx, repo.uid, recorded.digest, recorded.manifest, options.now);
      result.manifests.push({ digest: recorded.digest, mediaType: recorded.manifest.mediaType, kind: recorded.manifest.kind, written: recorded.written });
    }
    const tagged = options.tag !== undefined ? [{ digest: tops[0].digest, ref: options.tag }] : tops.filter((t) => t.ref !== undefined && isTag(t.ref));
    for (const { digest, ref } of tagged) {
      const tag = await moveTagWithEvent(trx, repo, { name: ref!, digest }, {
        now: options.now,
        typePrefix,
        via: "registry import",
      });
      result.tags.push({ name: tag.name, digest: tag.digest });
    }
    return result;
  });
}

/**
 * Copies each distinct blob into `content` from its file, streamed and hashed on the way; a
 * blob already stored at its size is not copied again. A file whose bytes do not hash to its
 * digest is INVALID_ARGUMENT (that blob is not stored).
 */
async function copyBlobs(content: ContentStore, blobs: LayoutBlob[], onProgress: ImportOptions["onProgress"]): Promise<void> {
  const distinct = [...new Map(blobs.map((b) => [b.digest, b])).values()];
  const progress: CopyProgress = { bytes: 0, totalBytes: distinct.reduce((sum, b) => sum + b.size, 0), blobs: 0, totalBlobs: distinct.length };
  for (const blob of distinct) {
    if ((await content.size(blob.digest)) !== blob.size) {
      async function* counted(source: AsyncIterable<Buffer>) {
        for await (const chunk of source) {
          progress.bytes += chunk.length;
          onProgress?.(progress);
          yield chunk;
        }
      }
      try {
        await content.putStream(Readable.from(counted(createReadStream(blob.path))), blob.digest);
      } catch (error) {
        if (error instanceof DigestMismatch) throw importError(`${blob.path}: blob ${blob.digest} does not match its digest or size`);
        throw error;
      }
    } else {
      progress.bytes += blob.size;
    }
    progress.blobs++;
    onProgress?.(progress);
  }
}
