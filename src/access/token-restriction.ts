import { isSelfOrDescendant } from "../aip/uidp.js";
import type { Grants } from "./principal.js";

/**
 * What a token may do at most, whatever its identity holds: the capabilities (`caps`, enum names)
 * and the group subtrees (`scopes`, group uids) the token exchange was asked to narrow it to
 * (`/sts/exchange?cap=&scopes=`). A restriction only narrows: the token's grants are the identity's
 * grants within it. Absent: no restriction.
 */
export interface TokenRestriction {
  caps?: readonly string[];
  scopes?: readonly string[];
}

/** The claims a restricted token carries. */
export const CAPS_CLAIM = "caps";
export const SCOPES_CLAIM = "scopes";

const strings = (value: unknown): string[] | undefined => (Array.isArray(value) && value.every((v) => typeof v === "string") ? (value as string[]) : undefined);

/**
 * The restriction a verified token's claims carry, or undefined for none. A claim of the wrong
 * shape restricts to nothing (no capability, no group): a token this server signed never has one.
 */
export function restrictionOf(claims: Record<string, unknown>): TokenRestriction | undefined {
  const [caps, scopes] = [claims[CAPS_CLAIM], claims[SCOPES_CLAIM]];
  if (caps === undefined && scopes === undefined) return undefined;
  return { caps: caps === undefined ? undefined : (strings(caps) ?? []), scopes: scopes === undefined ? undefined : (strings(scopes) ?? []) };
}

/** The claims that carry `restriction` in a token (none for an empty one). */
export function restrictionClaims(restriction: TokenRestriction): Record<string, string[]> {
  const claims: Record<string, string[]> = {};
  if (restriction.caps !== undefined) claims[CAPS_CLAIM] = [...restriction.caps];
  if (restriction.scopes !== undefined) claims[SCOPES_CLAIM] = [...restriction.scopes];
  return claims;
}

/** `grants` within `restriction`: a capability outside its caps, or a group outside its scopes, is held nowhere. */
export function restrictedGrants(grants: Grants, restriction: TokenRestriction | undefined): Grants {
  if (restriction === undefined) return grants;
  const { caps, scopes } = restriction;
  const allowed = (capabilities: readonly string[]) => caps === undefined || capabilities.every((c) => caps.includes(c));
  const inScope = (group: string) => scopes === undefined || scopes.some((root) => isSelfOrDescendant(group, root));
  return {
    has: (group, capabilities) => allowed(capabilities) && inScope(group) && grants.has(group, capabilities),
    visibleRoots(capabilities) {
      if (!allowed(capabilities)) return [];
      const roots = grants.visibleRoots(capabilities);
      if (scopes === undefined) return roots;
      // The subtrees both cover: a root inside a scope, or a scope inside a root.
      const both = [...roots.filter(inScope), ...scopes.filter((scope) => roots.some((root) => isSelfOrDescendant(scope, root)))];
      return [...new Set(both)].filter((g) => !both.some((other) => other !== g && isSelfOrDescendant(g, other))).sort();
    },
  };
}
