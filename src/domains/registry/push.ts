import type { Kysely } from "kysely";
import { defaultEventsConfig } from "../../config.js";
import { ConflictError } from "../../store/errors.js";
import type { Database } from "../kit/schema.js";
import { inTransaction } from "../../store/transaction.js";
import { findOrganizationByName } from "../iam/index.js";
import type { ContentStore } from "./content/content-store.js";
import { RegistryError } from "./errors.js";
import { recordPush, recordRepoCreated } from "./events.js";
import { queueReportWork } from "./image-inventory.js";
import { MismatchedSizes, MissingReferences, recordManifest } from "./images.js";
import { digestAlgorithm, digestOf } from "./digests.js";
import { InvalidManifest, parseManifest, platformOfConfig, type Manifest } from "./manifest.js";
import { checkDigest, checkTag, isDigestReference, REPO_NAME, type RepositoryName } from "./names.js";
import { linkedBlobSize } from "./store/blobs.js";
import { findOrInsertRepo, findRepoByPath, type RepoRow } from "./store/repos.js";
import { moveTagWithEvent } from "./tag-moves.js";
import { readPushedSignatures, recordPushedSignatures } from "./trust/verification.js";

/**
 * What a push changes, independent of HTTP: the repo a first push creates, and manifests with
 * the tags they move (uploads becoming blobs: `uploads.ts`). Each change is one transaction;
 * refusals are RegistryErrors.
 */

/** Largest config blob read to learn an image's platform. */
export const MAX_CONFIG_BYTES = 1024 * 1024;

/**
 * Creates the repo `name`, which its caller found missing, in its organization's root group (with
 * its `repo.created` event naming `via`, in the transaction that inserts it); a racing first push's repo is
 * returned instead. The caller's right to create it was checked when its token was issued (push
 * on a missing repo). Throws NAME_INVALID for a name a new repo may not have, NAME_UNKNOWN
 * without the organization.
 */
export async function createRepoForPush(db: Kysely<Database>, name: RepositoryName, now: number, eventTypePrefix: string, actor: string, via = "registry push"): Promise<RepoRow> {
  if (name.image.length > 255 || !REPO_NAME.test(name.image)) {
    throw new RegistryError("NAME_INVALID", "a new repository name is lowercase components of letters and digits separated by . _ or -", { name: name.full });
  }
  const organization = await findOrganizationByName(db, name.organization);
  if (organization === undefined) throw new RegistryError("NAME_UNKNOWN", `organization ${name.organization} is not known`, { name: name.full });
  try {
    return await inTransaction(db, undefined, async (trx) => {
      const { row, created } = await findOrInsertRepo(trx, organization, name.image, organization.uid, now);
      if (created) await recordRepoCreated(trx, row, { now, typePrefix: eventTypePrefix, via, actor });
      return row;
    });
  } catch (error) {
    // Two first pushes at once: the loser gets the winner's repo.
    const raced = error instanceof ConflictError ? await findRepoByPath(db, name.organization, name.image) : undefined;
    if (raced === undefined) throw error;
    return raced;
  }
}

async function readAll(content: ContentStore, digest: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of content.read(digest)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * The platform an image manifest's config blob names, read from the content store; undefined for
 * an index, a config over MAX_CONFIG_BYTES, or one whose bytes are gone (a collection may have
 * removed them since the caller found the blob linked).
 */
export async function storedConfigPlatform(content: ContentStore, manifest: Manifest): Promise<{ architecture: string; os: string } | undefined> {
  if (manifest.kind !== "image" || manifest.config.size > MAX_CONFIG_BYTES) return undefined;
  const config = await readAll(content, manifest.config.digest).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return undefined;
    throw error;
  });
  return config === undefined ? undefined : platformOfConfig(config);
}

/**
 * Stores a pushed manifest in the repo and, when `reference` is a tag, moves the tag to it
 * (recorded in the tag history), with the push's events (`registry.push`, and the tag's
 * `created` or `updated`), in one transaction. Everything it names must be there: an
 * image's config and layers as blobs of the repo, an index's manifests in the repo.
 * Throws MANIFEST_INVALID, DIGEST_INVALID, TAG_INVALID or MANIFEST_BLOB_UNKNOWN.
 */
export async function pushManifest(
  db: Kysely<Database>,
  content: ContentStore,
  repo: RepoRow,
  options: { reference: string; bytes: Buffer; contentType?: string; now: number; eventTypePrefix?: string; repository?: string; actor?: string },
): Promise<{ digest: string; manifest: Manifest }> {
  const { reference, bytes } = options;
  const byDigest = isDigestReference(reference);
  if (byDigest) checkDigest(reference);
  else checkTag(reference);

  let manifest: Manifest;
  try {
    manifest = parseManifest(bytes, options.contentType);
  } catch (error) {
    if (error instanceof InvalidManifest) throw new RegistryError("MANIFEST_INVALID", error.message, null);
    throw error;
  }
  // A manifest pushed by digest is named by that digest's algorithm; one pushed by tag by sha256.
  const digest = digestOf(bytes, byDigest ? digestAlgorithm(reference) : "sha256");
  if (byDigest && digest !== reference) throw new RegistryError("DIGEST_INVALID", `the manifest hashes to ${digest}, not ${reference}`, { digest: reference });

  // A config removed since it was found linked leaves the platform unknown (then the transaction below finds it missing).
  const platform = manifest.kind === "image" && (await linkedBlobSize(db, repo.uid, manifest.config.digest)) !== undefined ? await storedConfigPlatform(content, manifest) : undefined;

  // The signatures it attaches to an image, verified in the transaction below (trust/verification.ts).
  const signatures = await readPushedSignatures(db, content, repo.uid, manifest, byDigest ? undefined : reference);

  await inTransaction(db, undefined, async (trx) => {
    try {
      const recorded = await recordManifest(trx, repo.uid, bytes, manifest, { digest, platform, requireBlobs: true, now: options.now });
      if (recorded.written) await queueReportWork(trx, repo.uid, digest, manifest, options.now, byDigest ? undefined : reference);
      if (signatures !== undefined) await recordPushedSignatures(trx, repo, digest, signatures.records, options.now);
    } catch (error) {
      if (error instanceof MissingReferences) throw new RegistryError("MANIFEST_BLOB_UNKNOWN", "the manifest names blobs or manifests the repository does not hold", { missing: error.missing });
      if (error instanceof MismatchedSizes) throw new RegistryError("MANIFEST_INVALID", error.message, { mismatches: error.mismatches });
      throw error;
    }
    const typePrefix = options.eventTypePrefix ?? defaultEventsConfig.typePrefix;
    if (!byDigest) await moveTagWithEvent(trx, repo, { name: reference, digest }, { now: options.now, typePrefix, via: "registry push", actor: options.actor });
    const push = { repository: options.repository ?? repo.name, repo, tag: byDigest ? "" : reference, digest, mediaType: manifest.mediaType };
    await recordPush(trx, push, { now: options.now, typePrefix, actor: options.actor });
  });
  return { digest, manifest };
}
