import type { DescMessage, Message } from "@bufbuild/protobuf";
import { FieldValueError, isRepeated, protoPath, resolveFieldPath, setFieldFromString } from "./field-path.js";
import { invalidArgumentError } from "../http/status-json.js";
import type { FieldViolation } from "../../aip/errors.js";

/** Request fields already bound by the URL path or the body of an HTTP rule. */
export interface BoundFields {
  /** Proto paths set from the URL path, e.g. `group.uid`. */
  readonly path: ReadonlySet<string>;
  /** The rule's `body`: "" (none), "*" (whole message), or a top-level proto field name. */
  readonly body: string;
}

/**
 * Sets query parameters on `message` (of type `desc`).
 *
 * Contracts:
 * - A parameter name is a dotted field path of proto or JSON names (`uidp.children_of`,
 *   `uidp.childrenOf`); values convert per field type (see field-path.ts).
 * - A repeated field takes every occurrence of its parameter; a singular field given more
 *   than once (under any spelling) is an error.
 * - A bad value, a parameter naming no field (`?artifactName=` for `artifact_name` would
 *   otherwise filter nothing and answer everything), or one naming a field bound by the path or
 *   the body, throws
 *   INVALID_ARGUMENT (ConnectError) whose BadRequest lists every offending parameter by the
 *   name the client used.
 * Returns the proto paths that were set.
 */
export function applyQueryParams(desc: DescMessage, message: Message, params: URLSearchParams, bound: BoundFields): Set<string> {
  const violations: FieldViolation[] = [];
  const set = new Set<string>();
  for (const [name, value] of params) {
    try {
      const chain = resolveFieldPath(desc, name.split("."), name);
      const path = protoPath(chain);
      const conflict = boundConflict(path, bound);
      if (conflict) throw new FieldValueError(name, conflict);
      if (set.has(path) && !isRepeated(chain)) throw new FieldValueError(name, "given more than once");
      setFieldFromString(message, desc, chain, value, name);
      set.add(path);
    } catch (e) {
      if (!(e instanceof FieldValueError)) throw e;
      if (!violations.some((v) => v.field === e.field)) violations.push({ field: e.field, description: e.description });
    }
  }
  if (violations.length > 0) throw invalidArgumentError(violations);
  return set;
}

function boundConflict(path: string, bound: BoundFields): string | undefined {
  if (bound.body === "*") return "not a query parameter: the request body carries every field";
  const top = path.split(".", 1)[0];
  if (bound.body !== "" && top === bound.body) return "not a query parameter: set it in the request body";
  for (const p of bound.path) {
    if (path === p || path.startsWith(p + ".") || p.startsWith(path + ".")) return "not a query parameter: bound by the URL path";
  }
  return undefined;
}
