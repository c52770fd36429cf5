/** The naming rules of the registry: repository names, tags and digests. */
import { ORGANIZATION_NAME } from "../iam/index.js";
import { RegistryError } from "./errors.js";
import { DIGEST, DIGEST_RULE } from "./digests.js";

/** Longest repository name `<organization>/<image>` (as the Distribution spec advises). */
export const MAX_NAME_LENGTH = 255;

/** One path component of an image name (Distribution spec, case-insensitive). */
const IMAGE_COMPONENT = /^[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*$/i;
/** A tag (Distribution spec): at most 128 characters. */
export const TAG_NAME = /^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}$/;
/** The tag rule, as error messages state it. */
export const TAG_RULE = "a tag is 1 to 128 characters of letters, digits, _ . and -, not starting with . or -";
/** A repo name: a registry path below the organization, lowercase (`<organization>/<repo name>`). */
export const REPO_NAME = /^[a-z0-9]+([._-][a-z0-9]+)*(\/[a-z0-9]+([._-][a-z0-9]+)*)*$/;

export interface RepositoryName {
  /** `<organization>/<image>`. */
  full: string;
  organization: string;
  /** May contain `/`. */
  image: string;
}

/** Parses `<organization>/<image>`; throws NAME_INVALID. */
export function parseRepositoryName(full: string): RepositoryName {
  const slash = full.indexOf("/");
  const organization = slash < 0 ? full : full.slice(0, slash);
  const image = slash < 0 ? "" : full.slice(slash + 1);
  if (full.length > MAX_NAME_LENGTH) throw new RegistryError("NAME_INVALID", `repository name is longer than ${MAX_NAME_LENGTH} characters`, { name: full.slice(0, 64) });
  if (!ORGANIZATION_NAME.test(organization)) throw new RegistryError("NAME_INVALID", "repository name must be <organization>/<image>; the organization name is invalid", { name: full });
  if (image === "" || !image.split("/").every((c) => IMAGE_COMPONENT.test(c))) {
    throw new RegistryError("NAME_INVALID", "repository name must be <organization>/<image>; the image name is invalid", { name: full });
  }
  return { full, organization, image };
}

/** True for a valid tag (at most 128 characters). */
export function isTag(tag: string): boolean {
  return TAG_NAME.test(tag);
}

/** Returns a valid tag; throws TAG_INVALID otherwise. */
export function checkTag(tag: string): string {
  if (!isTag(tag)) throw new RegistryError("TAG_INVALID", TAG_RULE, { tag: tag.slice(0, 140) });
  return tag;
}

/**
 * True for a manifest reference that is a digest (`<algorithm>:<encoded>`, any algorithm: a tag
 * holds no `:`), false for a tag. A digest of an algorithm the registry does not hold is still a
 * digest: `checkDigest` refuses it as DIGEST_INVALID, never as TAG_INVALID.
 */
export function isDigestReference(reference: string): boolean {
  return reference.includes(":");
}

/** Returns a digest parameter when it is a supported digest (sha256 or sha512); throws DIGEST_INVALID otherwise. */
export function checkDigest(digest: string | null): string {
  if (digest === null || !DIGEST.test(digest)) throw new RegistryError("DIGEST_INVALID", DIGEST_RULE, { digest: digest?.slice(0, 140) ?? null });
  return digest;
}
