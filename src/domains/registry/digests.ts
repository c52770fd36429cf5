import { createHash, type Hash } from "node:crypto";

/**
 * Content digests (OCI image spec, "Digests"): `<algorithm>:<encoded>`. The registry stores and
 * verifies the two registered algorithms, sha256 (the default: what the registry computes when a
 * client names none) and sha512; any other well-formed digest is refused as unsupported.
 */
export const DIGEST_ALGORITHMS = { sha256: 64, sha512: 128 } as const;
export type DigestAlgorithm = keyof typeof DIGEST_ALGORITHMS;

/** A digest the registry supports: sha256 with 64 or sha512 with 128 lowercase hex characters. */
export const DIGEST = /^(?:sha256:[0-9a-f]{64}|sha512:[0-9a-f]{128})$/;
/** The longest supported digest, characters (`sha512:` and 128 hex). */
export const MAX_DIGEST_LENGTH = 7 + 128;
/** The rule, as error messages state it. */
export const DIGEST_RULE = "a digest is sha256: and 64, or sha512: and 128, lowercase hex characters";

/** The algorithm of a supported digest. */
export function digestAlgorithm(digest: string): DigestAlgorithm {
  return digest.startsWith("sha512:") ? "sha512" : "sha256";
}

/** The encoded part of a digest (its hex), after `<algorithm>:`. */
export function digestHex(digest: string): string {
  return digest.slice(digest.indexOf(":") + 1);
}

/** A running hash for content to be checked against a digest of `algorithm`. */
export function hashOf(algorithm: DigestAlgorithm): Hash {
  return createHash(algorithm);
}

/** The digest of `bytes` by `algorithm` (sha256 unless told). */
export function digestOf(bytes: Uint8Array, algorithm: DigestAlgorithm = "sha256"): string {
  return `${algorithm}:${createHash(algorithm).update(bytes).digest("hex")}`;
}
