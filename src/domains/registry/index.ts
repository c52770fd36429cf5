/**
 * The registry domain's face: what other folders may use of it. Everything else under
 * `src/domains/registry/` is private to the domain. Its operations take plain inputs, run in
 * their own transactions and throw RegistryErrors (or, for `importImages`, API errors); those on
 * one repository are reached through its handle (`repositoryHandle`).
 */
export { ChunkLengthMismatch, createFileContentStore, DigestMismatch, UploadTooLarge, type ContentStore } from "./content/content-store.js";
export { openContentStore } from "./content/open-content-store.js";
export { InvalidStorageUrl, StorageUnavailable } from "./content/s3-location.js";
export { RegistryError, type RegistryErrorKind } from "./errors.js";
export { collectGarbage, DEFAULT_GC_GRACE_MS, expireUploads, UPLOAD_LIFETIME_MS, type GcResult } from "./gc.js";
export { TagImmutableError } from "./immutable-tags.js";
export { importImages, type CopyProgress, type ImportOptions, type ImportResult } from "./import.js";
export { MAX_MANIFEST_BYTES, MEDIA_TYPE } from "./manifest.js";
export { checkDigest, checkTag, isDigestReference, isTag, MAX_NAME_LENGTH, parseRepositoryName, REPO_NAME, TAG_NAME, TAG_RULE, type RepositoryName } from "./names.js";
export { repositoryPaths } from "./pull.js";
export { queueMatchesFor } from "./report-queue.js";
export { startReportWorker, type ReportWorker } from "./report-worker.js";
export { repositoryHandle, type RegistryParts, type Repository } from "./repository.js";
export { createPullThroughParts, pullThroughRepository, type PullThroughParts } from "./pull-through/pull-through.js";
export type { RepoRow } from "./store/repos.js";
export { DAY_MS, listResolvedVulnsReports, resolvedVulnsOrderable, type ResolvedVulnRow, type ResolvedVulnsReportRow } from "./store/resolved-vulns.js";
