import type { DescField, DescMessage, JsonObject, JsonValue } from "@bufbuild/protobuf";
import type { FieldViolation } from "../../aip/errors.js";

const fieldsByName = new WeakMap<DescMessage, Map<string, DescField>>();

/** The field named `name` (proto or JSON name) of `desc`, or undefined. */
export function fieldNamed(desc: DescMessage, name: string): DescField | undefined {
  let byName = fieldsByName.get(desc);
  if (!byName) {
    byName = new Map();
    for (const f of desc.fields) {
      byName.set(f.jsonName, f);
      byName.set(f.name, f);
    }
    fieldsByName.set(desc, byName);
  }
  return byName.get(name);
}

/** A JSON object (not an array, not null). */
export function isObject(json: JsonValue): json is JsonObject {
  return typeof json === "object" && json !== null && !Array.isArray(json);
}

/**
 * The keys of `json` that name no field of `desc`, at every depth, as field violations of the
 * request (`group.nmae`, `oidc.additional_scopes[0].x`, `claims["k"].x`), each described as
 * Google's REST front ends do (`Unknown name "nmae"`). `path` is the prefix of `json`'s fields
 * (`group.`, or "" for the request itself). Well-known types keep their own JSON forms and are not
 * looked into; a known field's value of the wrong type is left for the decoder to refuse.
 */
export function unknownJsonFields(desc: DescMessage, json: JsonValue, path: string): FieldViolation[] {
  if (!isObject(json) || desc.typeName.startsWith("google.protobuf.")) return [];
  const unknown: FieldViolation[] = [];
  for (const [key, value] of Object.entries(json)) {
    const field = fieldNamed(desc, key);
    if (field === undefined) {
      unknown.push({ field: `${path}${key}`, description: `Unknown name "${key}": ${desc.typeName} has no such field` });
      continue;
    }
    const at = `${path}${field.name}`;
    if (field.fieldKind === "message") unknown.push(...unknownJsonFields(field.message, value, `${at}.`));
    else if (field.fieldKind === "list" && field.listKind === "message" && Array.isArray(value)) {
      value.forEach((item, i) => unknown.push(...unknownJsonFields(field.message, item, `${at}[${i}].`)));
    } else if (field.fieldKind === "map" && field.mapKind === "message" && isObject(value)) {
      for (const [k, item] of Object.entries(value)) unknown.push(...unknownJsonFields(field.message, item, `${at}[${JSON.stringify(k)}].`));
    }
  }
  return unknown;
}
