import { createHash } from "node:crypto";
import { getOption, hasOption, type DescEnumValue } from "@bufbuild/protobuf";
import { BuiltInRole, built_in_roles, Cap, CapSchema, string_name } from "../../gen/platform/common/v1/authorization_pb.js";

/**
 * The current value of each capability number: the first one declared. The
 * others are deprecated aliases (older names), accepted in JSON and never
 * written or stored.
 */
export const CURRENT_CAPABILITIES: DescEnumValue[] = CapSchema.values.filter((v) => v.number !== Cap.UNSPECIFIED && CapSchema.value[v.number as Cap] === v);

/** Every capability name (`CAP_*`, current names only), in enum order. */
export const ALL_CAPABILITIES: string[] = CURRENT_CAPABILITIES.map((v) => v.name);

/** The current name of a capability number. */
export function capabilityName(cap: Cap): string {
  const value = CapSchema.value[cap] as DescEnumValue | undefined;
  if (!value || cap === Cap.UNSPECIFIED) throw new Error(`unknown capability ${cap}`);
  return value.name;
}

/** Each current capability's string form (`repo.list`, its `string_name` option), by number. */
const STRINGS = new Map<Cap, string>(CURRENT_CAPABILITIES.map((v) => [v.number as Cap, getOption(v, string_name)]));

/** Every spelling a capability may be given in, to its number: string forms and enum names (aliases too). */
const SPELLINGS = new Map<string, Cap>([
  ...CapSchema.values.filter((v) => v.number !== Cap.UNSPECIFIED).map((v) => [v.name, v.number as Cap] as const),
  ...[...STRINGS].filter(([, s]) => s !== "").map(([cap, s]) => [s, cap] as const),
]);

/** A capability's string form (`repo.list`): what v1 answers. Throws for a number that is no capability. */
export function capabilityString(cap: Cap): string {
  const value = STRINGS.get(cap);
  if (!value) throw new Error(`capability ${cap} has no string form`);
  return value;
}

/**
 * The capability a string names, in its string form (`repo.list`) or by an enum name
 * (`CAP_REPO_LIST`, or an older alias); undefined for anything else, `CAP_UNSPECIFIED` included.
 */
export function capabilityOfString(name: string): Cap | undefined {
  return SPELLINGS.get(name);
}

/**
 * The built-in roles a capability is placed in, from its `built_in_roles`
 * option; undefined when the value declares none (an alias, or a mistake a
 * test catches).
 */
export function placementOf(value: DescEnumValue): BuiltInRole[] | undefined {
  return hasOption(value, built_in_roles) ? getOption(value, built_in_roles).roles : undefined;
}

/** Built-in role uids are root-level and the same on every installation. */
function builtInUid(name: string): string {
  return createHash("sha1").update(`platform-api/built-in-role/${name}`).digest("hex");
}

export type BuiltInRoleName = "viewer" | "editor" | "owner" | "registry.pull" | "registry.pull_token_creator";

/** Name and description of each built-in role (api-surface 4); what they hold is in the proto. */
export const BUILT_IN_ROLE_NAMES: Record<Exclude<BuiltInRole, BuiltInRole.UNSPECIFIED>, { name: BuiltInRoleName; description: string }> = {
  [BuiltInRole.VIEWER]: { name: "viewer", description: "List and read everything" },
  [BuiltInRole.EDITOR]: {
    name: "editor",
    description: "Viewer, plus create, update and delete repos, tags and subscriptions; push and pull",
  },
  [BuiltInRole.OWNER]: { name: "owner", description: "Everything" },
  [BuiltInRole.REGISTRY_PULL]: { name: "registry.pull", description: "List repos and tags, pull images" },
  [BuiltInRole.REGISTRY_PULL_TOKEN_CREATOR]: { name: "registry.pull_token_creator", description: "List groups, create pull tokens" },
};

/** The built-in roles (api-surface 4), each holding the capabilities placed in it. */
/** A built-in role as the store keeps it: its uid, name, description and capability names. */
export interface StoredBuiltInRole {
  uid: string;
  name: string;
  description: string;
  capabilities: string[];
}

export const BUILT_IN_ROLES: StoredBuiltInRole[] = Object.entries(BUILT_IN_ROLE_NAMES).map(([role, { name, description }]) => ({
  uid: builtInUid(name),
  name,
  description,
  capabilities: CURRENT_CAPABILITIES.filter((v) => placementOf(v)?.includes(Number(role) as BuiltInRole)).map((v) => v.name),
}));

export function builtInRole(name: BuiltInRoleName): StoredBuiltInRole {
  const role = BUILT_IN_ROLES.find((r) => r.name === name);
  if (!role) throw new Error(`no built-in role ${name}`);
  return role;
}
