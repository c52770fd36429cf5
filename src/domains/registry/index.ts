/**
 * The registry domain's face: what other folders may use of it. Everything else under
 * `src/domains/registry/` is private to the domain.
 */
export { ChunkLengthMismatch, createFileContentStore, DigestMismatch, UploadTooLarge, type ContentStore } from "./content/content-store.js";
export { openContentStore } from "./content/open-content-store.js";
export { InvalidStorageUrl, StorageUnavailable } from "./content/s3-location.js";
export { RegistryError, type RegistryErrorKind } from "./errors.js";
export { checkDigest, checkTag, isTag, MAX_NAME_LENGTH, parseRepositoryName, REPO_NAME, TAG_NAME, TAG_RULE, type RepositoryName } from "./names.js";
