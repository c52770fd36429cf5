import { addAbortSignal, type Readable } from "node:stream";
import { InventoryError, isSbomMediaType, packagesOfImage, parseSbom, uniquePackages, readImageFiles, stopReason, distroQualifier, type AttachedSbom, type InventoryPackage, type LayerCache, type LayerLimits, type ScanThreads } from "../../engines/inventory/index.js";
import type { ContentStore } from "./content/content-store.js";
import type { Db } from "../kit/schema.js";
import { ensureReport } from "./store/image-reports.js";
import { findManifest, listReferrers, type ManifestRow } from "./store/manifests.js";
import { enqueueReportJob } from "./store/report-jobs.js";
import { verifiedSbomsOf } from "./trust/store/signatures.js";
import { isNonDistributable, parseManifest, platformEntries, type Descriptor, type Manifest } from "./manifest.js";

/**
 * The inventory of one image manifest of a repo: the packages of its layers (read streaming
 * through the content store) and of the SBOMs its referrers carry (those of the image, and of any
 * index of the repo naming it). Throws InventoryError when a layer or an SBOM cannot be read.
 */

/** Largest SBOM or attestation blob read, bytes. */
export const MAX_SBOM_BYTES = 64 * 1024 * 1024;

/** Layer media types that are filesystem changesets (OCI and Docker, any compression). */
export function isLayerMediaType(mediaType: string): boolean {
  return /\.tar(\+|$)|rootfs\.(foreign\.)?diff\.tar/.test(mediaType);
}

/** An image manifest the registry inventories: an image with no subject (a referrer is an artifact about an image, not one). */
export function isInventoried(manifest: Manifest): boolean {
  return manifest.kind === "image" && manifest.subject === undefined;
}

/**
 * cosign's tag scheme for registries without the referrers API: an attestation of image
 * `sha256:<hex>` is tagged `sha256-<hex>.att`, an attached SBOM `sha256-<hex>.sbom`.
 */
const ATTACHMENT_TAG = /^sha256-([0-9a-f]{64})\.(att|sbom)$/;

/** The digest a cosign attachment tag names, or undefined for any other tag. */
export function attachmentSubject(tag: string | undefined): string | undefined {
  const match = tag === undefined ? null : ATTACHMENT_TAG.exec(tag);
  return match ? `sha256:${match[1]}` : undefined;
}

/**
 * Queues what storing `manifest` (digest `digest`, pushed under `tag` if any) in a repo asks of the
 * reports, in the transaction that stores it: an image's inventory (its report PENDING until done);
 * for a referrer (a `subject`, or a cosign attachment tag), the inventory again of its subject's
 * image, or of each platform image of its subject index.
 */
export async function queueReportWork(db: Db, repoUid: string, digest: string, manifest: Manifest, now: number, tag?: string): Promise<void> {
  const attachedTo = manifest.subject?.digest ?? attachmentSubject(tag);
  if (attachedTo === undefined) {
    if (!isInventoried(manifest)) return;
    await ensureReport(db, digest, now);
    await enqueueReportJob(db, { digest, repoUid, kind: "inventory" }, now);
    return;
  }
  const subject = await findManifest(db, repoUid, attachedTo);
  if (subject === undefined) return; // pushed before its subject: the subject's inventory will read it
  const parsed = parseManifest(subject.content, subject.media_type);
  const images = parsed.kind === "index" ? platformEntries(parsed).map((d) => d.digest) : isInventoried(parsed) ? [subject.digest] : [];
  for (const image of images) {
    await ensureReport(db, image, now);
    await enqueueReportJob(db, { digest: image, repoUid, kind: "inventory" }, now);
  }
}

async function readBlob(content: ContentStore, descriptor: Descriptor, what: string, signal: AbortSignal): Promise<Buffer> {
  if (descriptor.size > MAX_SBOM_BYTES) throw new InventoryError(`${what} is larger than ${MAX_SBOM_BYTES} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of addAbortSignal(signal, content.read(descriptor.digest))) {
      size += (chunk as Buffer).length;
      if (size > MAX_SBOM_BYTES) throw new InventoryError(`${what} is larger than ${MAX_SBOM_BYTES} bytes`);
      chunks.push(chunk as Buffer);
    }
  } catch (error) {
    throw signal.aborted ? stopReason(signal) : error;
  }
  return Buffer.concat(chunks);
}

/**
 * The referrer manifests of an image in a repo: its own, and those of the indexes of the repo that
 * name it, by `subject` and by cosign's attachment tags (`sha256-<hex>.att`, `.sbom`).
 */
async function referrersOf(db: Db, repoUid: string, digest: string): Promise<ManifestRow[]> {
  const parents = await db.selectFrom("manifest_refs").select("parent_digest").where("repo_uid", "=", repoUid).where("child_digest", "=", digest).execute();
  const subjects = [digest, ...parents.map((p) => p.parent_digest)];
  const out = new Map<string, ManifestRow>();
  for (const subject of subjects) for (const row of await listReferrers(db, repoUid, subject)) out.set(row.digest, row);
  const tags = subjects.flatMap((d) => [`${d.replace(":", "-")}.att`, `${d.replace(":", "-")}.sbom`]);
  const tagged = await db.selectFrom("tags").select("digest").where("repo_uid", "=", repoUid).where("name", "in", tags).execute();
  for (const { digest: attached } of tagged) {
    const row = out.has(attached) ? undefined : await findManifest(db, repoUid, attached);
    if (row) out.set(row.digest, row);
  }
  return [...out.values()].sort((a, b) => (a.digest < b.digest ? -1 : 1));
}

export interface InventoryOptions {
  limits?: Partial<LayerLimits>;
  /** Stops the inventory (the worker stopping): it throws an InventoryError, the signal's reason is not recorded. */
  signal?: AbortSignal;
  /** Outcomes of layers read for earlier images. */
  cache?: LayerCache;
  /** The time the image may take, ms: then it throws InventoryError "reading the image took longer than ...". */
  timeoutMs?: number;
  /** Where layers are read and packages parsed: these threads, or (without) the caller's own. */
  threads?: Pick<ScanThreads, "readLayer" | "packagesOfImage">;
}

export interface ImageInventory {
  /** The purl `distro` qualifier of the image's os-release; "" when none. */
  distro: string;
  packages: InventoryPackage[];
  /** Where the packages came from: `layers`, or `attestation:<key name>`. */
  source: string;
}

/**
 * The inventory a verified SBOM attestation of image `digest` gives (docs/decisions.md, "The
 * report's packages from a verified SBOM attestation"): the packages of the in-toto statement's
 * SPDX or CycloneDX predicate, read by the inventory engine's SBOM parser, from the first
 * attestation verified by a key trusted at the repo's group; undefined when there is none (or none
 * the parser reads), and the layers are read instead.
 */
export async function attestedInventory(db: Db, repoUid: string, digest: string): Promise<ImageInventory | undefined> {
  const repo = await db.selectFrom("repos").select(["uid", "group_uid"]).where("uid", "=", repoUid).executeTakeFirst();
  if (repo === undefined) return undefined;
  for (const sbom of await verifiedSbomsOf(db, repo, digest)) {
    let parsed;
    try {
      parsed = parseSbom(sbom.statement, `the SBOM attestation ${sbom.manifestDigest}`);
    } catch (error) {
      if (error instanceof InventoryError) continue;
      throw error;
    }
    if (parsed === undefined) continue;
    return { distro: "", packages: uniquePackages(parsed.packages), source: `attestation:${sbom.keyName}` };
  }
  return undefined;
}

/** The SBOMs the referrers of image `digest` carry, each read when asked for. */
async function* sbomsOf(db: Db, content: ContentStore, repoUid: string, digest: string, signal: AbortSignal): AsyncGenerator<AttachedSbom> {
  for (const referrer of await referrersOf(db, repoUid, digest)) {
    const attached = parseManifest(referrer.content, referrer.media_type);
    if (attached.kind !== "image") continue;
    const typed = isSbomMediaType(attached.artifactType);
    for (const layer of attached.layers) {
      if (!isSbomMediaType(layer.mediaType) && !(typed && /json|octet-stream/.test(layer.mediaType))) continue;
      const what = `the SBOM ${layer.digest} (${layer.mediaType}) of referrer ${referrer.digest}`;
      yield { bytes: await readBlob(content, layer, what, signal), what };
    }
  }
}

/**
 * Reads the inventory of image `digest` of repo `repoUid`. Throws InventoryError (the image's
 * report fails with its message: unreadable, a limit passed, out of time or of a scan thread's CPU
 * time or heap) or, for a store or content store failure or a scan thread's crash, the error itself.
 */
export async function inventoryImage(db: Db, content: ContentStore, repoUid: string, digest: string, options: InventoryOptions = {}): Promise<ImageInventory> {
  const row = await findManifest(db, repoUid, digest);
  if (row === undefined) throw new InventoryError(`the manifest ${digest} is no longer stored`);
  const manifest = parseManifest(row.content, row.media_type);
  if (manifest.kind !== "image") throw new InventoryError(`${digest} is an index: its platform images have the reports`);
  const budget = new AbortController();
  const stop = () => budget.abort(options.signal!.reason);
  if (options.signal?.aborted) stop();
  options.signal?.addEventListener("abort", stop, { once: true });
  const timer =
    options.timeoutMs === undefined
      ? undefined
      : setTimeout(() => budget.abort(new InventoryError(`reading the image took longer than ${options.timeoutMs! / 1000} s`)), options.timeoutMs);
  try {
    const layers = manifest.layers
      .filter((layer) => isLayerMediaType(layer.mediaType) && !isNonDistributable(layer.mediaType))
      .map((layer) => ({ digest: layer.digest, open: (): Readable => content.read(layer.digest) }));
    const files = await readImageFiles(layers, options.limits, { signal: budget.signal, cache: options.cache, reader: options.threads?.readLayer });
    const sboms = sbomsOf(db, content, repoUid, digest, budget.signal);
    const inventory = options.threads ? await options.threads.packagesOfImage(files, sboms, budget.signal) : await packagesOfImage(files, sboms);
    return { distro: distroQualifier(inventory.distro), packages: inventory.packages, source: "layers" };
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", stop);
  }
}
