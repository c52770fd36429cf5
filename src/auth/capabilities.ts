import { createHash } from "node:crypto";
import { Cap, CapSchema } from "../../gen/platform/common/v1/authorization_pb.js";
import type { BuiltInRole } from "../store/repositories/roles.js";

/** Every capability name (`CAP_*`), from the proto enum. */
export const ALL_CAPABILITIES: string[] = CapSchema.values.filter((v) => v.number !== Cap.UNSPECIFIED).map((v) => v.name);

export function capabilityName(cap: Cap): string {
  const value = CapSchema.values.find((v) => v.number === cap);
  if (!value || cap === Cap.UNSPECIFIED) throw new Error(`unknown capability ${cap}`);
  return value.name;
}

/** Built-in role uids are root-level and the same on every installation. */
function builtInUid(name: string): string {
  return createHash("sha1").update(`platform-api/built-in-role/${name}`).digest("hex");
}

const lists = ALL_CAPABILITIES.filter((c) => c.endsWith("_LIST"));
const editorKinds = ["CAP_REPO_", "CAP_TAG_", "CAP_EVENTS_SUBSCRIPTIONS_"];

/** The built-in roles (api-surface 4). */
export const BUILT_IN_ROLES: BuiltInRole[] = [
  { name: "viewer", description: "List and read everything", capabilities: lists },
  {
    name: "editor",
    description: "Viewer, plus create, update and delete repos, tags and subscriptions; push and pull",
    capabilities: [
      ...new Set([
        ...lists,
        ...ALL_CAPABILITIES.filter((c) => editorKinds.some((k) => c.startsWith(k))),
        "CAP_REGISTRY_PULL",
        "CAP_REGISTRY_PUSH",
      ]),
    ],
  },
  { name: "owner", description: "Everything", capabilities: ALL_CAPABILITIES },
  {
    name: "registry.pull",
    description: "List repos and tags, pull images",
    capabilities: ["CAP_REPO_LIST", "CAP_TAG_LIST", "CAP_REGISTRY_PULL"],
  },
].map((role) => ({ ...role, uid: builtInUid(role.name) }));

export function builtInRole(name: "viewer" | "editor" | "owner" | "registry.pull"): BuiltInRole {
  const role = BUILT_IN_ROLES.find((r) => r.name === name);
  if (!role) throw new Error(`no built-in role ${name}`);
  return role;
}
