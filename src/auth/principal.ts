import { createContextKey } from "@connectrpc/connect";
import { isSelfOrDescendant } from "../aip/uidp.js";

/** What the caller may do: the groups where it holds each capability (and everything below them). */
export interface Grants {
  /** True when every capability is held on `group` or one of its ancestors. */
  has(group: string, capabilities: readonly string[]): boolean;
  /** The minimal set of subtree roots where every capability is held. */
  visibleRoots(capabilities: readonly string[]): string[];
}

/** A verified caller. */
export interface Principal {
  /** The identity uid (token `sub`). */
  identityUid: string;
  /** What the caller holds, read with its identity when the token was verified. */
  grants: Grants;
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
