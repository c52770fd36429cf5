import { clone, create, type DescField, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { reflect, type ReflectMessage } from "@bufbuild/protobuf/reflect";
import type { FieldMask } from "@bufbuild/protobuf/wkt";
import { invalidField } from "./errors.js";

/**
 * Applies a PATCH (spec 4.2, AIP-134) to `current` and returns the updated copy:
 * - no mask (or no paths): the fields set in `patch` change; inside a message
 *   field (e.g. `oidc`) only its subfields set in the patch change (the implied
 *   mask of AIP-134 names leaves);
 * - a mask: exactly its listed fields change, other fields of `patch` are
 *   ignored; a path may reach into message fields (`oidc.client_id`), and a
 *   message field named whole (`oidc`) is replaced whole;
 * - `*`: every updatable field is replaced (omitted ones are reset).
 * Path segments may be proto (`client_id`) or JSON (`clientId`) names. A path
 * that is no field of the resource is INVALID_ARGUMENT on `update_mask`; a path
 * whose first segment is not in `updatable` (output-only, identifiers) is ignored.
 */
export function applyFieldMask<Desc extends DescMessage>(
  schema: Desc,
  current: MessageShape<Desc>,
  patch: MessageShape<Desc>,
  mask: FieldMask | undefined,
  updatable: readonly string[],
): MessageShape<Desc> {
  const allowed = new Set(updatable);
  const next = clone(schema, current);
  const to = reflect(schema, next);
  const from = reflect(schema, patch);
  const paths = mask?.paths ?? [];
  if (paths.length === 0) {
    for (const field of schema.fields) if (allowed.has(field.name) && from.isSet(field)) merge(to, from, field);
    return next;
  }
  if (paths.includes("*")) {
    if (paths.length > 1) throw invalidField("update_mask", "`*` must be the only path");
    for (const field of schema.fields) if (allowed.has(field.name)) copy(to, from, field);
    return next;
  }
  for (const path of paths) {
    const chain = resolvePath(schema, path);
    if (allowed.has(chain[0].name)) copyAt(to, from, chain);
  }
  return next;
}

/** The fields a dotted path names, outermost first; INVALID_ARGUMENT when it names none. */
function resolvePath(schema: DescMessage, path: string): DescField[] {
  const chain: DescField[] = [];
  let message: DescMessage | undefined = schema;
  for (const segment of path.split(".")) {
    const field: DescField | undefined = message?.fields.find((f) => f.name === segment || f.jsonName === segment);
    if (!field) throw invalidField("update_mask", `unknown field "${path}" of ${schema.name}`);
    chain.push(field);
    message = field.fieldKind === "message" ? field.message : undefined;
  }
  return chain;
}

/** The field takes the patch's value, or is reset when the patch leaves it unset. */
function copy(to: ReflectMessage, from: ReflectMessage, field: DescField): void {
  if (from.isSet(field)) to.set(field, from.get(field));
  else to.clear(field);
}

/** Like `copy` for a field set in the patch, but a message field already set merges the patch's set subfields. */
function merge(to: ReflectMessage, from: ReflectMessage, field: DescField): void {
  if (field.fieldKind !== "message" || !to.isSet(field)) return copy(to, from, field);
  const target = to.get(field) as ReflectMessage;
  const source = from.get(field) as ReflectMessage;
  for (const sub of source.fields) if (source.isSet(sub)) merge(target, source, sub);
}

/** `copy` at the end of a path, creating the messages on the way when they are unset. */
function copyAt(to: ReflectMessage, from: ReflectMessage, chain: DescField[]): void {
  const [field, ...rest] = chain;
  if (rest.length === 0) return copy(to, from, field);
  if (field.fieldKind !== "message") throw new Error(`${field.name} is not a message field`);
  if (!to.isSet(field)) to.set(field, reflect(field.message, create(field.message)));
  const source = from.isSet(field) ? (from.get(field) as ReflectMessage) : reflect(field.message, create(field.message));
  copyAt(to.get(field) as ReflectMessage, source, rest);
}
