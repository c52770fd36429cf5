import type { WhoAmI } from "../../gen/platform/auth/v1/auth_pb.js";

/** Whether the caller holds `capability` (its string form, `groups.create`) on `group`: a binding on it or above it. */
export function holds(whoami: WhoAmI | undefined, capability: string, group: string): boolean {
  return (whoami?.capabilities ?? []).some((c) => {
    const at = c.group?.id ?? "";
    return (group === at || group.startsWith(`${at}/`)) && c.capabilities.includes(capability);
  });
}

/** The groups the caller's bindings are on, without those below another of them. */
export function rootGroups(whoami: WhoAmI | undefined): Array<{ id: string; name: string }> {
  const groups = new Map((whoami?.capabilities ?? []).flatMap((c) => (c.group ? [[c.group.id, c.group.name] as const] : [])));
  return [...groups]
    .filter(([id]) => ![...groups.keys()].some((other) => other !== id && id.startsWith(`${other}/`)))
    .map(([id, name]) => ({ id, name }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** The uids from the organization down to `uid`: `org`, `org/a`, `org/a/b`. */
export function ancestry(uid: string): string[] {
  const parts = uid.split("/");
  return parts.map((_, i) => parts.slice(0, i + 1).join("/"));
}
