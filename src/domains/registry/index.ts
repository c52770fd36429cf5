/**
 * The registry domain's face: what other folders may use of it. Everything else under
 * `src/domains/registry/` is private to the domain.
 */
export { ChunkLengthMismatch, createFileContentStore, DigestMismatch, UploadTooLarge, type ContentStore } from "./content/content-store.js";
export { openContentStore } from "./content/open-content-store.js";
export { InvalidStorageUrl, StorageUnavailable } from "./content/s3-location.js";
