import { create, fromJson, ScalarType } from "@bufbuild/protobuf";
import type { DescEnum, DescField, DescMessage, Message } from "@bufbuild/protobuf";
import { reflect } from "@bufbuild/protobuf/reflect";
import type { ReflectMessage } from "@bufbuild/protobuf/reflect";
import { base64Decode } from "@bufbuild/protobuf/wire";
import { fieldNamed } from "../http/json-fields.js";
import { isWrapperDesc } from "@bufbuild/protobuf/wkt";

/**
 * Dotted field paths into request messages, and conversion of URL strings (path captures,
 * query values) into field values.
 *
 * Contracts:
 * - A path segment names a field by its proto name or its JSON name.
 * - Every segment but the last is a singular message field; intermediate messages are
 *   created on demand.
 * - The last field is a scalar, an enum, a repeated scalar/enum (each value is appended), or
 *   a message with a string form: Timestamp and Duration (their JSON strings; a Timestamp also
 *   takes a date, `2026-11-26`, as its midnight UTC), FieldMask
 *   (comma-separated, camelCase or snake_case paths), and the wrapper types.
 * - Failures throw FieldValueError; the caller turns it into INVALID_ARGUMENT.
 */

export class FieldValueError extends Error {
  constructor(
    /** The field as the caller should see it (the dotted name as written). */
    readonly field: string,
    readonly description: string,
  ) {
    super(`${field}: ${description}`);
    this.name = "FieldValueError";
  }
}

/** A path segment that names no field (`Unknown name`, as Google's REST front ends say). */
export class UnknownFieldError extends FieldValueError {
  constructor(field: string, segment: string, message: DescMessage) {
    super(field, `Unknown name "${segment}": ${message.typeName} has no such field`);
  }
}

/** The field named `name` (proto or JSON name) of `desc`, or undefined. */
export const findField = fieldNamed;

/**
 * Resolves a dotted path to its chain of fields. Throws FieldValueError naming `display`
 * when a segment is unknown or an intermediate segment is not a singular message.
 */
export function resolveFieldPath(desc: DescMessage, path: readonly string[], display = path.join(".")): DescField[] {
  const chain: DescField[] = [];
  let current: DescMessage | undefined = desc;
  for (const name of path) {
    if (current === undefined) throw new FieldValueError(display, "not a message field, cannot select a sub-field");
    const field = findField(current, name);
    if (!field) throw new UnknownFieldError(display, name, current);
    chain.push(field);
    current = field.fieldKind === "message" ? field.message : undefined;
  }
  return chain;
}

/** The proto-name form of a field chain, e.g. `uidp.children_of`. */
export function protoPath(chain: readonly DescField[]): string {
  return chain.map((f) => f.name).join(".");
}

/**
 * Sets (or, for a repeated field, appends) the string `value` at the field chain, creating
 * intermediate messages. Throws FieldValueError naming `display`.
 */
export function setFieldFromString(message: Message, desc: DescMessage, chain: readonly DescField[], value: string, display: string): void {
  let target: ReflectMessage = reflect(desc, message);
  for (const field of chain.slice(0, -1)) {
    if (field.fieldKind !== "message") throw new FieldValueError(display, "not a message field, cannot select a sub-field");
    if (!target.isSet(field)) target.set(field, reflect(field.message, create(field.message)));
    target = target.get(field);
  }
  const field = chain[chain.length - 1];
  switch (field.fieldKind) {
    case "scalar":
      target.set(field, parseScalar(field.scalar, value, display));
      return;
    case "enum":
      target.set(field, parseEnum(field.enum, value, display));
      return;
    case "message":
      target.set(field, reflect(field.message, parseMessage(field.message, value, display)));
      return;
    case "list": {
      const list = target.get(field);
      if (field.listKind === "scalar") list.add(parseScalar(field.scalar, value, display));
      else if (field.listKind === "enum") list.add(parseEnum(field.enum, value, display));
      else throw new FieldValueError(display, "repeated message field cannot be set from a string");
      return;
    }
    case "map":
      throw new FieldValueError(display, "map field cannot be set from a string");
  }
}

/** The value at a chain of singular fields when every field on it is set, else undefined. */
export function valueAt(message: Message, desc: DescMessage, chain: readonly DescField[]): unknown {
  let target: ReflectMessage = reflect(desc, message);
  for (const field of chain.slice(0, -1)) {
    if (field.fieldKind !== "message" || !target.isSet(field)) return undefined;
    target = target.get(field);
  }
  const field = chain[chain.length - 1];
  if (field.fieldKind !== "scalar" && field.fieldKind !== "enum") return undefined;
  return target.isSet(field) ? target.get(field) : undefined;
}

/** The message type of a message field, or of the values of a list or map of messages. */
export function messageOf(field: DescField): DescMessage | undefined {
  if (field.fieldKind === "message") return field.message;
  if (field.fieldKind === "list" && field.listKind === "message") return field.message;
  if (field.fieldKind === "map" && field.mapKind === "message") return field.message;
  return undefined;
}

/** Whether the last field of a chain accepts several values (a repeated field). */
export function isRepeated(chain: readonly DescField[]): boolean {
  return chain[chain.length - 1].fieldKind === "list";
}

const INT = /^[+-]?\d+$/;

function parseScalar(type: ScalarType, value: string, display: string): unknown {
  const bad = (what: string): never => {
    throw new FieldValueError(display, `invalid ${what}: "${value}"`);
  };
  switch (type) {
    case ScalarType.STRING:
      return value;
    case ScalarType.BOOL:
      if (value === "true" || value === "1") return true;
      if (value === "false" || value === "0") return false;
      return bad("bool (want true, false, 1 or 0)");
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
      return parseInt32(value, -0x80000000, 0x7fffffff) ?? bad("int32");
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return parseInt32(value, 0, 0xffffffff) ?? bad("uint32");
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
      return parseInt64(value, -(2n ** 63n), 2n ** 63n - 1n) ?? bad("int64");
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return parseInt64(value, 0n, 2n ** 64n - 1n) ?? bad("uint64");
    case ScalarType.FLOAT:
    case ScalarType.DOUBLE: {
      if (value === "NaN") return NaN;
      if (value === "Infinity") return Infinity;
      if (value === "-Infinity") return -Infinity;
      const n = value.trim() === "" ? NaN : Number(value);
      return Number.isFinite(n) ? n : bad("number");
    }
    case ScalarType.BYTES:
      try {
        return base64Decode(value);
      } catch {
        return bad("base64 bytes");
      }
  }
}

function parseInt32(value: string, min: number, max: number): number | undefined {
  if (!INT.test(value)) return undefined;
  const n = Number(value);
  return n >= min && n <= max ? n : undefined;
}

function parseInt64(value: string, min: bigint, max: bigint): bigint | undefined {
  if (!INT.test(value)) return undefined;
  const n = BigInt(value);
  return n >= min && n <= max ? n : undefined;
}

function parseEnum(desc: DescEnum, value: string, display: string): number {
  const byName = desc.values.find((v) => v.name === value);
  if (byName) return byName.number;
  if (INT.test(value)) {
    const byNumber = desc.values.find((v) => v.number === Number(value));
    if (byNumber) return byNumber.number;
  }
  throw new FieldValueError(display, `invalid value "${value}" for enum ${desc.typeName}`);
}

/** A calendar date, `YYYY-MM-DD`. */
const DATE = /^\d{4}-\d{2}-\d{2}$/;

function parseMessage(desc: DescMessage, value: string, display: string): Message {
  switch (desc.typeName) {
    case "google.protobuf.FieldMask":
      return create(desc, { paths: parseFieldMaskPaths(value) });
    case "google.protobuf.Timestamp":
    case "google.protobuf.Duration":
      try {
        if (desc.typeName === "google.protobuf.Timestamp" && DATE.test(value)) {
          if (new Date(`${value}T00:00:00Z`).toISOString().slice(0, 10) !== value) throw new Error("no such date");
          return fromJson(desc, `${value}T00:00:00Z`);
        }
        return fromJson(desc, value);
      } catch {
        throw new FieldValueError(display, `invalid ${desc.name}: "${value}"`);
      }
  }
  if (isWrapperDesc(desc)) {
    return create(desc, { value: parseScalar(desc.fields[0].scalar, value, display) } as never);
  }
  throw new FieldValueError(display, `message ${desc.typeName} cannot be set from a string; set its fields with dotted names`);
}

/** FieldMask paths from `a,b.c`; camelCase components become snake_case, `*` stays. */
export function parseFieldMaskPaths(value: string): string[] {
  return value
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p !== "")
    .map((p) => p.split(".").map((c) => c.replace(/[A-Z]/g, (l) => "_" + l.toLowerCase())).join("."));
}
