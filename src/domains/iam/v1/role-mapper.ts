import { create, type MessageInitShape } from "@bufbuild/protobuf";
import type { Cap } from "../../../../gen/platform/common/v1/authorization_pb.js";
import { RoleSchema as V1RoleSchema, type Role as V1Role } from "../../../../gen/platform/iam/v1/role_pb.js";
import type { Role, RoleSchema } from "../../../../gen/platform/iam/v2/role_pb.js";
import { Violations } from "../../../aip/validation.js";
import { capabilityOfString, capabilityString } from "../../../access/capabilities.js";

/** v2 capabilities in v1's string form (`repo.list`), in the same (enum) order. */
export function capabilitiesToV1(caps: readonly Cap[]): string[] {
  return caps.map(capabilityString);
}

/**
 * v1 capability strings as v2 capabilities: string forms (`repo.list`) and enum names
 * (`CAP_REPO_LIST`) alike. Throws INVALID_ARGUMENT naming each unknown one (`<field>[i]`).
 */
export function capabilitiesFromV1(names: readonly string[], field: string): Cap[] {
  const violations = new Violations();
  const caps = names.map((name, i) => {
    const cap = capabilityOfString(name);
    if (cap === undefined) violations.add(`${field}[${i}]`, `unknown capability "${name}" (a string form such as "repo.list", or an enum name such as "CAP_REPO_LIST")`);
    return cap;
  });
  violations.throwIfAny();
  return caps as Cap[];
}

/** A v2 role in the v1 shape: `uid` is `id`, capabilities in their string form; v1 shows no times. */
export function roleToV1(role: Role): V1Role {
  return create(V1RoleSchema, { id: role.uid, name: role.name, description: role.description, capabilities: capabilitiesToV1(role.capabilities) });
}

/**
 * A v1 role as the v2 role a Create or Update writes; `field` is where the request holds the
 * capabilities (`role.capabilities` in a Create, `capabilities` in an Update). Throws
 * INVALID_ARGUMENT for an unknown capability.
 */
export function roleFromV1(role: V1Role | undefined, field: string): MessageInitShape<typeof RoleSchema> {
  return {
    uid: role?.id ?? "",
    name: role?.name ?? "",
    description: role?.description ?? "",
    capabilities: capabilitiesFromV1(role?.capabilities ?? [], field),
  };
}
