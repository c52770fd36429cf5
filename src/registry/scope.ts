import { fail } from "./registry-errors.js";

/** The only action the registry grants. */
export const PULL = "pull";
/** Longest repository name `<organization>/<image>` (as the Distribution spec advises). */
export const MAX_NAME_LENGTH = 255;

/** An organization name (as groups validate it). */
const ORGANIZATION = /^[a-z0-9]+([._-][a-z0-9]+)*$/;
/** One path component of an image name (Distribution spec, case-insensitive). */
const IMAGE_COMPONENT = /^[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*$/i;
/** A tag (Distribution spec): at most 128 characters. */
const TAG = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;

export interface RepositoryName {
  /** `<organization>/<image>`. */
  full: string;
  organization: string;
  /** May contain `/`. */
  image: string;
}

export interface RepositoryScope {
  name: RepositoryName;
  /** Every action asked for, as given. */
  actions: string[];
}

/** Parses `<organization>/<image>`; throws 400 NAME_INVALID. */
export function parseRepositoryName(full: string): RepositoryName {
  const slash = full.indexOf("/");
  const organization = slash < 0 ? full : full.slice(0, slash);
  const image = slash < 0 ? "" : full.slice(slash + 1);
  if (full.length > MAX_NAME_LENGTH) fail(400, "NAME_INVALID", `repository name is longer than ${MAX_NAME_LENGTH} characters`, { name: full.slice(0, 64) });
  if (!ORGANIZATION.test(organization)) fail(400, "NAME_INVALID", "repository name must be <organization>/<image>; the organization name is invalid", { name: full });
  if (image === "" || !image.split("/").every((c) => IMAGE_COMPONENT.test(c))) {
    fail(400, "NAME_INVALID", "repository name must be <organization>/<image>; the image name is invalid", { name: full });
  }
  return { full, organization, image };
}

/**
 * Parses a token request scope `repository:<organization>/<image>:<actions>` (actions
 * comma-separated). Throws 400 UNSUPPORTED for another resource type or a scope without
 * `pull`, 400 NAME_INVALID for a bad name.
 */
export function parseScope(scope: string): RepositoryScope {
  const prefix = "repository:";
  if (!scope.startsWith(prefix)) fail(400, "UNSUPPORTED", "scope must be repository:<organization>/<image>:pull", { scope });
  const rest = scope.slice(prefix.length);
  const colon = rest.lastIndexOf(":");
  if (colon < 0) fail(400, "UNSUPPORTED", "scope must be repository:<organization>/<image>:pull", { scope });
  const name = parseRepositoryName(rest.slice(0, colon));
  const actions = rest.slice(colon + 1).split(",").map((a) => a.trim());
  if (!actions.includes(PULL)) fail(400, "UNSUPPORTED", "only the pull action is supported", { scope });
  return { name, actions };
}

/** The scope string a client should ask for to read `name`. */
export function pullScope(name: string): string {
  return `repository:${name}:${PULL}`;
}

/** True for a valid tag (at most 128 characters). */
export function isTag(tag: string): boolean {
  return TAG.test(tag);
}
