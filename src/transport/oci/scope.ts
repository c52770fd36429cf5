import { parseRepositoryName, type RepositoryName } from "../../domains/registry/index.js";
import { fail } from "./registry-errors.js";

/** The scopes of registry tokens: `repository:<organization>/<image>:<actions>` and the catalog's. */

/** The actions a registry token can grant on a repository. */
export const PULL = "pull";
export const PUSH = "push";
export const DELETE = "delete";
export type Action = typeof PULL | typeof PUSH | typeof DELETE;
const ACTIONS: readonly string[] = [PULL, PUSH, DELETE];

export interface RepositoryScope {
  name: RepositoryName;
  /** The known actions asked for (`*` means all of them), without duplicates; unknown ones are dropped. */
  actions: Action[];
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
