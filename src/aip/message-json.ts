import { toJson } from "@bufbuild/protobuf";
import type { DescField, DescMessage, JsonObject, JsonValue, Message, Registry } from "@bufbuild/protobuf";

/**
 * The one JSON rendering of a message, whatever carries it: REST answers, Connect's JSON answers
 * and event bodies (docs/decisions.md, "One JSON rendering"):
 * - every implicit-presence field is written, zero values included (`false`, `0`, `""`, `[]`),
 *   as the hosted service's gateway emits them; unset `optional` and message fields stay absent;
 * - every google.protobuf.Timestamp carries exactly three fraction digits (`...T10:00:00.000Z`,
 *   the contract's "ISO 8601 UTC with milliseconds"; still canonical proto3 JSON);
 * - with `protoFieldNames` (the answers of v1 methods, as the hosted v1 gateway wrote them),
 *   keys are proto field names (`created_at`), else JSON names (`createTime`).
 * `registry` resolves `google.protobuf.Any` values.
 */
export function messageJson(desc: DescMessage, message: Message, options: { registry?: Registry; protoFieldNames?: boolean } = {}): JsonValue {
  const protoFieldNames = options.protoFieldNames ?? false;
  const json = toJson(desc, message, { registry: options.registry, alwaysEmitImplicit: true, useProtoFieldName: protoFieldNames });
  return withMillisecondTimes(desc, json, protoFieldNames ? (f) => f.name : (f) => f.jsonName);
}

const TIMESTAMP = "google.protobuf.Timestamp";

/** The message a field holds (singular, in a list, or as a map's values), or undefined for scalars and enums. */
function messageOf(field: DescField): DescMessage | undefined {
  if (field.fieldKind === "message") return field.message;
  if (field.fieldKind === "list" && field.listKind === "message") return field.message;
  if (field.fieldKind === "map" && field.mapKind === "message") return field.message;
  return undefined;
}
const RFC3339 = /^(\d{4,}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?Z$/;

/** `2026-11-23T10:00:00Z` -> `2026-11-23T10:00:00.000Z`; finer fractions are cut to milliseconds. */
export function millisecondTime(text: string): string {
  const m = RFC3339.exec(text);
  if (!m) return text;
  return `${m[1]}.${(m[2] ?? "").padEnd(3, "0").slice(0, 3)}Z`;
}

/** Per message type: its fields that are, or lead to, a Timestamp. Empty for most types. */
const timeFields = new Map<string, DescField[]>();

function fieldsLeadingToTimes(desc: DescMessage, visiting = new Set<string>()): DescField[] {
  const known = timeFields.get(desc.typeName);
  if (known) return known;
  if (visiting.has(desc.typeName)) return [];
  visiting.add(desc.typeName);
  const found: DescField[] = [];
  for (const field of desc.fields) {
    const target = messageOf(field);
    if (target === undefined || (target.typeName.startsWith("google.protobuf.") && target.typeName !== TIMESTAMP)) continue;
    if (target.typeName === TIMESTAMP || fieldsLeadingToTimes(target, visiting).length > 0) found.push(field);
  }
  visiting.delete(desc.typeName);
  // A type inside a cycle may look time-free while its cycle is open: cache only from the outermost call.
  if (visiting.size === 0) timeFields.set(desc.typeName, found);
  return found;
}

function withMillisecondTimes(desc: DescMessage, json: JsonValue, keyOf: (field: DescField) => string): JsonValue {
  if (desc.typeName === TIMESTAMP) return typeof json === "string" ? millisecondTime(json) : json;
  const fields = fieldsLeadingToTimes(desc);
  if (fields.length === 0 || json === null || typeof json !== "object" || Array.isArray(json)) return json;
  const object = json as JsonObject;
  for (const field of fields) {
    const key = keyOf(field);
    const value = object[key];
    if (value === undefined || value === null) continue;
    const target = messageOf(field)!;
    if (Array.isArray(value)) object[key] = value.map((v) => withMillisecondTimes(target, v, keyOf));
    else if (field.fieldKind === "map" && typeof value === "object") {
      for (const [k, v] of Object.entries(value)) (value as JsonObject)[k] = withMillisecondTimes(target, v, keyOf);
    } else object[key] = withMillisecondTimes(target, value, keyOf);
  }
  return object;
}

/** Whether messages of `desc` can hold a google.protobuf.Timestamp, at any depth. */
export function holdsTimestamps(desc: DescMessage): boolean {
  return desc.typeName === TIMESTAMP || fieldsLeadingToTimes(desc).length > 0;
}

/** Canonical proto3 JSON of `desc` (JSON names) with every Timestamp given exactly three fraction digits, in place. */
export function withMillisecondTimestamps(desc: DescMessage, json: JsonValue): JsonValue {
  return withMillisecondTimes(desc, json, (f) => f.jsonName);
}
