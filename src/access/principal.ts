import { createContextKey } from "@connectrpc/connect";
import { isSelfOrDescendant } from "../aip/uidp.js";

/** What the caller may do: the groups where it holds each capability (and everything below them). */
export interface Grants {
  /** True when every capability is held on `group` or one of its ancestors. */
  has(group: string, capabilities: readonly string[]): boolean;
  /** The minimal set of subtree roots where every capability is held. */
  visibleRoots(capabilities: readonly string[]): string[];
}

/** What the server's login verified of a person (the `person` claim of their platform tokens). */
export interface PersonClaim {
  /** The provider's issuer and subject. */
  iss: string;
  sub: string;
  /** Present only when the provider said it is verified. */
  email?: string;
  name?: string;
  /** The organization's IdentityProvider uid; "" for the server-wide provider. */
  idp: string;
}

/** A verified caller. */
export interface Principal {
  /** The identity uid (token `sub`). */
  identityUid: string;
  /** What the caller holds, read with its identity when the token was verified. */
  grants: Grants;
  /** The token's own claims, for WhoAmI. */
  token?: { issuer: string; audience: string[]; expiry: number; issuedAt: number };
  /** Set for a person signed in through the server's login. */
  person?: PersonClaim;
  /** A person of the server-wide login with no identity yet: only RPCs declaring `admits_unregistered` admit them. */
  unregistered?: boolean;
}

export const principalKey = createContextKey<Principal | undefined>(undefined, { description: "the verified caller" });

/** Where an unscoped (List) RPC may look; set by the authorization interceptor. */
export const visibilityKey = createContextKey<string[] | undefined>(undefined, {
  description: "subtrees the caller may list; undefined means unrestricted",
});

/** The group a scoped RPC was authorized on (its scope field, stripped to the owning group); set by the authorization interceptor. */
export const scopeKey = createContextKey<string | undefined>(undefined, { description: "the group the call was authorized on" });

/** Builds Grants from (group, capability) pairs. */
export function grantsFrom(pairs: ReadonlyArray<{ group_uid: string; capability: string }>): Grants {
  const byCapability = new Map<string, string[]>();
  for (const { group_uid, capability } of pairs) {
    const groups = byCapability.get(capability) ?? [];
    groups.push(group_uid);
    byCapability.set(capability, groups);
  }
  const holds = (group: string, capability: string) =>
    (byCapability.get(capability) ?? []).some((root) => isSelfOrDescendant(group, root));
  return {
    has: (group, capabilities) => capabilities.every((c) => holds(group, c)),
    visibleRoots(capabilities) {
      if (capabilities.length === 0) return [];
      const candidates = [...new Set(capabilities.flatMap((c) => byCapability.get(c) ?? []))];
      const covered = candidates.filter((g) => capabilities.every((c) => holds(g, c)));
      return covered.filter((g) => !covered.some((other) => other !== g && isSelfOrDescendant(g, other))).sort();
    },
  };
}
