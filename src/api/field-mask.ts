import { clone, create, isFieldSet, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import type { FieldMask } from "@bufbuild/protobuf/wkt";
import { invalidField } from "./errors.js";

/**
 * Applies a PATCH (spec 4.2, AIP-134) to `current` and returns the updated copy:
 * - no mask (or no paths): the fields set in `patch` change;
 * - a mask: exactly its listed fields change, other fields of `patch` are ignored;
 * - `*`: every updatable field is replaced (omitted ones are reset).
 * Paths may be proto (`display_name`) or JSON (`displayName`) names. A path that
 * is no field of the resource is INVALID_ARGUMENT on `update_mask`; a field that
 * is not in `updatable` (output-only, identifiers) is ignored.
 */
export function applyFieldMask<Desc extends DescMessage>(
  schema: Desc,
  current: MessageShape<Desc>,
  patch: MessageShape<Desc>,
  mask: FieldMask | undefined,
  updatable: readonly string[],
): MessageShape<Desc> {
  const paths = resolvePaths(schema, patch, mask, updatable);
  const next = clone(schema, current);
  const fresh = create(schema) as Record<string, unknown>;
  const from = patch as Record<string, unknown>;
  const to = next as Record<string, unknown>;
  for (const field of schema.fields) {
    if (!paths.has(field.name)) continue;
    to[field.localName] = isFieldSet(patch, field) ? from[field.localName] : fresh[field.localName];
  }
  return next;
}

function resolvePaths<Desc extends DescMessage>(
  schema: Desc,
  patch: MessageShape<Desc>,
  mask: FieldMask | undefined,
  updatable: readonly string[],
): Set<string> {
  const allowed = new Set(updatable);
  const paths = mask?.paths ?? [];
  if (paths.length === 0) {
    return new Set(schema.fields.filter((f) => allowed.has(f.name) && isFieldSet(patch, f)).map((f) => f.name));
  }
  if (paths.includes("*")) {
    if (paths.length > 1) throw invalidField("update_mask", "`*` must be the only path");
    return allowed;
  }
  const out = new Set<string>();
  for (const path of paths) {
    const field = schema.fields.find((f) => f.name === path || f.jsonName === path);
    if (!field) throw invalidField("update_mask", `unknown field "${path}" of ${schema.name}`);
    if (allowed.has(field.name)) out.add(field.name);
  }
  return out;
}
