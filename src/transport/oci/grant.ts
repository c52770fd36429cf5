import type { Grants } from "../../access/principal.js";
import { restrictedGrants, type TokenRestriction } from "../../access/token-restriction.js";
import { findOrganizationByName, type GrantsCache } from "../../domains/iam/index.js";
import type { Repository } from "../../domains/registry/index.js";
import type { ResponseHeaders } from "../http/node-types.js";
import type { RegistryContext } from "./context.js";
import { bearerChallenge, fail } from "./registry-errors.js";
import { PULL, PUSH, repositoryScope, type Action } from "./scope.js";

/**
 * The one decision of what a caller may do of a repository: `/token` asks it for each scope
 * it issues, and the registry's endpoints ask it for a request carrying a platform token
 * (docs/decisions.md, "Registry host").
 */

/** The only tags an anonymous (free tier) token grants (spec 5 rule 4). */
export const FREE_TIER_TAGS = ["latest", "latest-dev"] as const;
/** The `sub` of tokens issued to anonymous callers (never an identity uid: those are UIDPs). */
export const ANONYMOUS_SUBJECT = "anonymous";
export const DEFAULT_PUBLIC_ORGANIZATION = "public";

/** The capability each action needs on the repo's group (or, to create the repo by pushing, on the organization). */
export const ACTION_CAPABILITIES: Record<Action, string[]> = {
  pull: ["CAP_REGISTRY_PULL"],
  push: ["CAP_REGISTRY_PUSH"],
  delete: ["CAP_TAG_DELETE"],
};
/** What pushing to a repo that does not exist yet needs on the organization. */
export const CREATE_BY_PUSH = ["CAP_REPO_CREATE", "CAP_REGISTRY_PUSH"];

/** The claim marking a registry token issued to a pull token: each use checks the pull token still lives. */
export const PULL_TOKEN_CLAIM = "pull_token";
/** The claim naming the registry password a registry token was issued to: each use checks the password still lives. */
export const REGISTRY_PASSWORD_CLAIM = "registry_password";

/** One entry of a registry token's `access` claim, and what a request is allowed. */
export interface AccessEntry {
  type: "repository";
  /** `<organization>/<image>`. */
  name: string;
  actions: Action[];
  /** When present, the only tags the caller may read (the free tier). */
  tags?: string[];
}

/** The `access` entry of a registry token that may list the catalog; which repos it lists is decided per request. */
export interface CatalogEntry {
  type: "registry";
  name: "catalog";
  actions: ["*"];
}

export const CATALOG_ENTRY: CatalogEntry = { type: "registry", name: "catalog", actions: ["*"] };

/** Who asks: anonymous, or an identity and what it holds. */
export type Caller = { subject: typeof ANONYMOUS_SUBJECT } | { subject: string; grants: Grants };

/**
 * How old the grants the registry judges by may be: none. A platform token used at the registry,
 * and `/token`, see the role bindings as they are now (docs/decisions.md, "Registry host"); the
 * grants cache then reads its clock on each request and the grants only when the clock moved.
 */
const REGISTRY_GRANTS_MAX_AGE_MS = 0;

/**
 * The identity `subject` (a verified token's `sub`) with its role bindings as they are now, asked
 * of IAM's grants cache (the API host's authorization path), within the token's `restriction`
 * (its claims' `restrictionOf`; none for a pull token).
 * Throws 401 (with `challenge`) when the identity no longer exists: its tokens died with it.
 */
export async function identityCaller(grants: GrantsCache, subject: string, challenge: ResponseHeaders, restriction?: TokenRestriction): Promise<Caller> {
  const held = await grants.grantsOf(subject, REGISTRY_GRANTS_MAX_AGE_MS);
  if (held === undefined) fail(401, "UNAUTHORIZED", "the token's identity no longer exists", null, challenge);
  return { subject, grants: restrictedGrants(held, restriction) };
}

/**
 * What `caller` may do of `actions` on `repository`. Throws 401 (anonymous, credentials needed) or
 * 403 DENIED when it may do none of it; a repository not there yet is granted pull to a caller who
 * may pull in its organization, and its calls answer NAME_UNKNOWN. Reads the repository's row through
 * its handle (once per handle) only when the answer depends on it.
 */
export async function grant(ctx: RegistryContext, caller: Caller, repository: Repository, actions: Action[]): Promise<AccessEntry> {
  const { config, db } = ctx;
  const { name } = repository;
  const isPublic = name.organization === (config.publicOrganization ?? DEFAULT_PUBLIC_ORGANIZATION);
  // The public organization's contents are public: a name not there yet is granted too, and its calls answer NAME_UNKNOWN.
  const freeTier = (): AccessEntry => ({ type: "repository", name: name.full, actions: [PULL], tags: [...FREE_TIER_TAGS] });

  if (!("grants" in caller)) {
    if (isPublic && actions.includes(PULL)) return freeTier();
    fail(401, "UNAUTHORIZED", "authentication required: this needs a platform token", { name: name.full }, {
      "www-authenticate": bearerChallenge(config.registryUrl, { scope: repositoryScope(name.full, actions) }),
    });
  }

  const { grants } = caller;
  let granted: Action[];
  const repo = await repository.find();
  const organization = repo === undefined ? await findOrganizationByName(db, name.organization) : undefined;
  if (repo !== undefined) {
    granted = actions.filter((a) => grants.has(repo.group_uid, ACTION_CAPABILITIES[a]));
  } else if (organization !== undefined && actions.includes(PUSH) && grants.has(organization.uid, CREATE_BY_PUSH)) {
    // The first push creates the repo in the organization; pulling it then needs pull there.
    granted = actions.filter((a) => a === PUSH || grants.has(organization.uid, ACTION_CAPABILITIES[a]));
  } else {
    granted = [];
  }
  if (granted.length > 0) return { type: "repository", name: name.full, actions: granted };

  if (isPublic && actions.includes(PULL)) return freeTier();
  // A repository not there yet, for a caller who could pull anything in its organization: pull is granted on its name
  // (the Docker token spec: less than asked is no error) and the call itself answers NAME_UNKNOWN. DENIED otherwise,
  // whether or not it exists.
  if (repo === undefined && organization !== undefined && actions.includes(PULL) && grants.has(organization.uid, ACTION_CAPABILITIES.pull)) {
    return { type: "repository", name: name.full, actions: [PULL] };
  }
  fail(403, "DENIED", `the caller may not ${actions.join(" or ")} ${name.full}`, { name: name.full });
}
