/**
 * What the registry's operations refuse, by kind. The kinds are named as the OCI Distribution
 * error codes they stand for, and the OCI host answers each one with that code.
 */
export type RegistryErrorKind =
  /** A repository name breaks the naming rules. */
  | "NAME_INVALID"
  /** No such repository, or no organization to create it in. */
  | "NAME_UNKNOWN"
  | "TAG_INVALID"
  /** Not a supported digest (sha256, sha512), or content that does not hash to the digest given. */
  | "DIGEST_INVALID"
  | "MANIFEST_INVALID"
  /** A manifest names blobs or manifests the repository does not hold. */
  | "MANIFEST_BLOB_UNKNOWN"
  | "MANIFEST_UNKNOWN"
  | "BLOB_UNKNOWN"
  | "BLOB_UPLOAD_UNKNOWN"
  /** A chunk that is not the length it announced (the upload is as it was). */
  | "BLOB_UPLOAD_INVALID"
  /** A blob over the size limit. */
  | "SIZE_INVALID"
  /** An upstream registry failed a pull through it, and nothing of what was asked is held. */
  | "UNAVAILABLE"
  /** An upstream registry answered 429 to a pull through it, and nothing of what was asked is held. */
  | "TOOMANYREQUESTS";

/** Thrown by the registry's operations: nothing of the refused change was written. `detail` says what was refused (JSON). */
export class RegistryError extends Error {
  constructor(
    readonly kind: RegistryErrorKind,
    message: string,
    readonly detail?: unknown,
  ) {
    super(message);
  }
}
