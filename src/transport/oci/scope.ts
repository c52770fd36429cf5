import { ORGANIZATION_NAME } from "../../domains/iam/group-validation.js";
import { fail } from "./registry-errors.js";

/** The actions a registry token can grant on a repository. */
export const PULL = "pull";
export const PUSH = "push";
export const DELETE = "delete";
export type Action = typeof PULL | typeof PUSH | typeof DELETE;
const ACTIONS: readonly string[] = [PULL, PUSH, DELETE];
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

export interface RepositoryScope {
  name: RepositoryName;
  /** The known actions asked for (`*` means all of them), without duplicates; unknown ones are dropped. */
  actions: Action[];
}

/** Parses `<organization>/<image>`; throws 400 NAME_INVALID. */
export function parseRepositoryName(full: string): RepositoryName {
  const slash = full.indexOf("/");
  const organization = slash < 0 ? full : full.slice(0, slash);
  const image = slash < 0 ? "" : full.slice(slash + 1);
  if (full.length > MAX_NAME_LENGTH) fail(400, "NAME_INVALID", `repository name is longer than ${MAX_NAME_LENGTH} characters`, { name: full.slice(0, 64) });
  if (!ORGANIZATION_NAME.test(organization)) fail(400, "NAME_INVALID", "repository name must be <organization>/<image>; the organization name is invalid", { name: full });
  if (image === "" || !image.split("/").every((c) => IMAGE_COMPONENT.test(c))) {
    fail(400, "NAME_INVALID", "repository name must be <organization>/<image>; the image name is invalid", { name: full });
  }
  return { full, organization, image };
}

/** The scope registry clients ask for to list repositories (`GET /v2/_catalog`), as Docker's registry names it. */
export const CATALOG_SCOPE = "registry:catalog:*";

/** True for a token request scope naming the catalog: `registry:catalog:` and actions with `*`. */
export function isCatalogScope(scope: string): boolean {
  return scope.startsWith("registry:catalog:") && scope.slice("registry:catalog:".length).split(",").includes("*");
}

/**
 * Parses a token request scope `repository:<organization>/<image>:<actions>` (actions
 * comma-separated). Throws 400 UNSUPPORTED for another resource type or a scope naming no
 * known action, 400 NAME_INVALID for a bad name.
 */
export function parseScope(scope: string): RepositoryScope {
  const prefix = "repository:";
  const usage = `scope must be repository:<organization>/<image>:<actions>, actions among pull, push and delete, or ${CATALOG_SCOPE}`;
  if (!scope.startsWith(prefix)) fail(400, "UNSUPPORTED", usage, { scope });
  const rest = scope.slice(prefix.length);
  const colon = rest.lastIndexOf(":");
  if (colon < 0) fail(400, "UNSUPPORTED", usage, { scope });
  const name = parseRepositoryName(rest.slice(0, colon));
  const asked = rest.slice(colon + 1).split(",").map((a) => a.trim());
  const actions = ACTIONS.filter((a): a is Action => asked.includes(a) || asked.includes("*"));
  if (actions.length === 0) fail(400, "UNSUPPORTED", usage, { scope });
  return { name, actions };
}

/** The scope string a client should ask for to do `actions` on `name`. */
export function repositoryScope(name: string, actions: readonly Action[] = [PULL]): string {
  return `repository:${name}:${actions.join(",")}`;
}

/** True for a valid tag (at most 128 characters). */
export function isTag(tag: string): boolean {
  return TAG_NAME.test(tag);
}

/** Returns a valid tag; throws 400 TAG_INVALID otherwise. */
export function checkTag(tag: string): string {
  if (!isTag(tag)) fail(400, "TAG_INVALID", TAG_RULE, { tag: tag.slice(0, 140) });
  return tag;
}
