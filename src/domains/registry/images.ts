import { notFound } from "../../aip/errors.js";
import { blobSizes, touchBlobs, unlinkedBlobs } from "./store/blobs.js";
import { existingManifests, findManifest, putManifest, putManifestRefs, type ManifestRow } from "./store/manifests.js";
import { shareReferenceLock } from "./store/reference-lock.js";
import type { Db } from "../kit/schema.js";
import { entryFor, imageSize, indexArchitectures, InvalidManifest, parseManifest, referencedDigests, sha256Digest, type Manifest } from "./manifest.js";

/**
 * The images of a repo, over its stored manifests: recording a manifest, and the
 * architectures and sizes ImagesService serves. Independent of any wire.
 */

/** When an index names no architecture, the one measured (api-surface 3). */
export const DEFAULT_ARCHITECTURE = "amd64";

/** A manifest names manifests (or, where required, blobs) the repo does not hold. */
export class MissingReferences extends Error {
  constructor(readonly missing: string[]) {
    super(`the manifest names what the repository does not hold: ${missing.join(", ")}`);
  }
}

/** A manifest's descriptor states another size than the blob the repo holds (sizes feed GetImageSize). */
export class MismatchedSizes extends Error {
  constructor(readonly mismatches: Array<{ digest: string; stated: number; stored: number }>) {
    super(`the manifest states sizes that are not those of the blobs: ${mismatches.map((m) => `${m.digest} is ${m.stored} bytes, not ${m.stated}`).join("; ")}`);
  }
}

export interface RecordedManifest {
  digest: string;
  manifest: Manifest;
  /** False when the repo already held this digest. */
  written: boolean;
}

/**
 * Stores `bytes` (parsed as `manifest`) as a manifest of the repo, with the manifests an
 * index names, in the caller's transaction, under the repo's reference lock (taken shared first:
 * a retention pass removes nothing this names, or went first and then it is missing). Everything an
 * index names must be in the repo, and with `requireBlobs` an image's config and layers too, at
 * the sizes its descriptors state; otherwise throws MissingReferences (or MismatchedSizes) and
 * writes nothing. `digest` names it (the sha256 of `bytes` unless told: a push by a sha512 digest
 * names it by that). `platform` is the image's architecture and OS when its config blob is at hand.
 */
export async function recordManifest(
  db: Db,
  repoUid: string,
  bytes: Buffer,
  manifest: Manifest,
  options: { digest?: string; platform?: { architecture: string; os: string }; requireBlobs: boolean; now: number },
): Promise<RecordedManifest> {
  await shareReferenceLock(db, repoUid);
  const digest = options.digest ?? sha256Digest(bytes);
  const needed = referencedDigests(manifest);
  // Marked used before they are checked: a collection deleting one either went first (then it is missing) or spares it.
  await touchBlobs(db, [...needed.blobs, ...needed.external], options.now);
  const present = await existingManifests(db, repoUid, needed.manifests);
  const missing = [...(options.requireBlobs ? await unlinkedBlobs(db, repoUid, needed.blobs) : []), ...needed.manifests.filter((d) => !present.has(d))];
  if (missing.length > 0) throw new MissingReferences(missing);
  if (options.requireBlobs && manifest.kind === "image") {
    const descriptors = [manifest.config, ...manifest.layers];
    const stored = await blobSizes(db, descriptors.map((d) => d.digest));
    const mismatches = descriptors.filter((d) => stored.has(d.digest) && stored.get(d.digest) !== d.size).map((d) => ({ digest: d.digest, stated: d.size, stored: stored.get(d.digest)! }));
    if (mismatches.length > 0) throw new MismatchedSizes(mismatches);
  }
  const row: ManifestRow = {
    repo_uid: repoUid,
    digest,
    media_type: manifest.mediaType,
    content: bytes,
    size: bytes.length,
    kind: manifest.kind,
    image_size: manifest.kind === "image" ? imageSize(manifest) : 0,
    architecture: options.platform?.architecture ?? "",
    os: options.platform?.os ?? "",
    artifact_type: manifest.artifactType,
    subject_digest: manifest.subject?.digest ?? "",
    create_time: options.now,
  };
  const written = await putManifest(db, row);
  if (manifest.kind === "index") await putManifestRefs(db, repoUid, digest, needed.manifests);
  return { digest, manifest, written };
}

async function stored(db: Db, repoUid: string, digest: string): Promise<{ row: ManifestRow; manifest: Manifest }> {
  const row = await findManifest(db, repoUid, digest);
  if (row === undefined) throw notFound("image", digest);
  try {
    return { row, manifest: parseManifest(row.content, row.media_type) };
  } catch (error) {
    if (error instanceof InvalidManifest) throw new Error(`stored manifest ${digest} of ${repoUid} does not parse: ${error.message}`);
    throw error;
  }
}

/** Architectures of an index (distinct, in its order) or of an image manifest. Throws NOT_FOUND. */
export async function imageArchitectures(db: Db, repoUid: string, digest: string): Promise<string[]> {
  const { row, manifest } = await stored(db, repoUid, digest);
  if (manifest.kind === "index") return indexArchitectures(manifest);
  return row.architecture === "" ? [] : [row.architecture];
}

/**
 * Size (config + layers) of one architecture's image. For an index, its entry for
 * `architecture` (default amd64), which the repo must also store; for an image manifest,
 * the image itself, when `architecture` is empty or its own.
 * Throws NOT_FOUND when there is no such image.
 */
export async function imageSizeOf(db: Db, repoUid: string, digest: string, architecture: string): Promise<{ size: number; architecture: string; digest: string }> {
  const { row, manifest } = await stored(db, repoUid, digest);
  if (manifest.kind === "image") {
    if (architecture !== "" && row.architecture !== "" && architecture !== row.architecture) {
      throw notFound("image", `${digest} for architecture ${architecture}`);
    }
    return { size: row.image_size, architecture: row.architecture, digest };
  }
  const wanted = architecture || DEFAULT_ARCHITECTURE;
  const entry = entryFor(manifest, wanted);
  if (entry === undefined) throw notFound("image", `${digest} for architecture ${wanted}`);
  const child = await findManifest(db, repoUid, entry.digest);
  if (child === undefined || child.kind !== "image") throw notFound("image", entry.digest);
  return { size: child.image_size, architecture: wanted, digest: entry.digest };
}
