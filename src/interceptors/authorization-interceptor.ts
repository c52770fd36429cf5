import type { DescField, DescMessage, DescMethod } from "@bufbuild/protobuf";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { invalidField, permissionDenied, unauthenticated } from "../aip/errors.js";
import { isRoot, isUidp, stripSegments } from "../aip/uidp.js";
import { principalKey, scopeKey, visibilityKey } from "../access/principal.js";
import { requirementOf, type Requirement } from "../access/rules.js";

/**
 * Enforces each RPC's declared `(platform.common.v1.auth)` rule before the
 * handler runs (permission before existence: a scope is judged from its uid
 * alone, without a read). A person signed in without an identity yet passes only RPCs that
 * declare `admits_unregistered`. Unscoped RPCs get the caller's visible subtrees in
 * `visibilityKey`, for the query to narrow on. Undeclared RPCs are refused.
 */
export function authorizationInterceptor(): Interceptor {
  const cache = new Map<DescMethod, Requirement>();
  return (next) => async (req) => {
    let requirement = cache.get(req.method);
    if (!requirement) {
      requirement = requirementOf(req.method);
      if (requirement.kind === "scoped") requirement = { ...requirement, path: localPath(req.method.input, requirement.field) };
      cache.set(req.method, requirement);
    }
    if (requirement.kind === "none") return next(req);
    if (requirement.kind === "undeclared") {
      throw new ConnectError(`${req.method.parent.typeName}/${req.method.name} declares no authorization`, Code.Unimplemented);
    }
    const principal = req.contextValues.get(principalKey);
    if (!principal) throw unauthenticated("this call needs `Authorization: Bearer <token>`");
    if (principal.unregistered && !requirement.admitsUnregistered) {
      throw permissionDenied("you are signed in but not registered: redeem an invite (POST /auth/v1/register) or create an organization first");
    }
    if (requirement.kind === "authenticated") return next(req);
    const grants = principal.grants;
    if (requirement.kind === "unscoped") {
      req.contextValues.set(visibilityKey, grants.visibleRoots(requirement.capabilities));
      return next(req);
    }
    if (req.stream) throw new ConnectError("scoped streaming calls are not supported", Code.Unimplemented);
    const uid = readPath(req.message, requirement.path ?? []);
    if (uid === "") {
      if (requirement.emptyAdmitsAuthenticated) return next(req);
      throw invalidField(requirement.field.join("."), "is required");
    }
    if (requirement.rootAdmitsAuthenticated && isUidp(uid) && isRoot(uid)) return next(req);
    const group = isUidp(uid) ? stripSegments(uid, requirement.stripSegments) : undefined;
    if (group === undefined) throw invalidField(requirement.field.join("."), "is not a valid uid for this call");
    req.contextValues.set(scopeKey, group);
    if (!grants.has(group, requirement.capabilities)) {
      throw permissionDenied(`the caller lacks ${requirement.capabilities.join(", ")} on ${group}`);
    }
    return next(req);
  };
}

/**
 * The property names (localName) along a path of proto field names, from the
 * request descriptor. Throws at first use of a method whose rule names a field
 * that does not exist: a broken declaration, not a caller error.
 */
function localPath(input: DescMessage, path: string[]): string[] {
  const out: string[] = [];
  let desc: DescMessage | undefined = input;
  for (const name of path) {
    const field: DescField | undefined = desc?.fields.find((f) => f.name === name);
    if (!field) throw new Error(`${input.typeName} has no field ${path.join(".")}`);
    out.push(field.localName);
    desc = field.fieldKind === "message" ? field.message : undefined;
  }
  return out;
}

/** Reads the string at a path of property names; "" when absent. */
function readPath(message: unknown, path: string[]): string {
  let value = message;
  for (const key of path) value = value && typeof value === "object" ? (value as Record<string, unknown>)[key] : undefined;
  return typeof value === "string" ? value : "";
}
