import { create, fromJson, getOption } from "@bufbuild/protobuf";
import type { DescField, DescMessage, JsonValue, Message } from "@bufbuild/protobuf";
import { reflect } from "@bufbuild/protobuf/reflect";
import { FieldMaskSchema } from "@bufbuild/protobuf/wkt";
import type { FieldMask } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { FieldBehavior, field_behavior } from "../../../gen/google/api/field_behavior_pb.js";
import { findField } from "./field-path.js";
import { duplicateKey } from "./json-body.js";
import { isObject, unknownJsonFields } from "../http/json-fields.js";
import type { RestRoute } from "./http-rules.js";
import type { NodeRequest } from "../http/node-types.js";
import { invalidArgumentError, transcoderError } from "../http/status-json.js";
import type { FieldViolation } from "../../aip/errors.js";

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** A body whose Content-Type is not JSON: answered HTTP 415 with `status` (INVALID_ARGUMENT); the body was read whole. */
export class UnsupportedMediaTypeError extends Error {
  readonly status: ConnectError;
  constructor(contentType: string | undefined) {
    super(`Content-Type ${contentType === undefined ? "(none)" : `"${contentType}"`} is not supported: send application/json`);
    this.name = "UnsupportedMediaTypeError";
    this.status = transcoderError(Code.InvalidArgument, "UNSUPPORTED_MEDIA_TYPE", `Invalid argument: ${this.message}`);
  }
}

/** Refuses a non-empty body that is not declared JSON (`application/json` or a `+json` type; charset may follow). */
export function checkJsonContentType(headers: NodeRequest["headers"], bytes: Uint8Array): void {
  if (bytes.byteLength === 0) return;
  const header = headers["content-type"];
  const type = typeof header === "string" ? header.split(";", 1)[0].trim().toLowerCase() : undefined;
  if (type === "application/json" || type?.endsWith("+json")) return;
  throw new UnsupportedMediaTypeError(typeof header === "string" ? header : undefined);
}

/**
 * Builds the request message from the JSON body of a route with a `body`.
 *
 * Contracts:
 * - An empty (or blank) body is an empty message.
 * - `body: "*"`: the JSON is the request message. `body: "<field>"`: the JSON is that field.
 * - A key naming no field, at any depth, is INVALID_ARGUMENT whose BadRequest names each such key
 *   (`group.nmae`; docs/decisions.md, "REST mapping details").
 * - Malformed JSON, a key given twice in one object, or a known field whose value does not
 *   fit the schema throws INVALID_ARGUMENT whose BadRequest names the offending top-level key
 *   as a request field path (`group.name`), or the body itself (`group`, or `body` for `*`).
 * Returns the message and the proto names of the top-level keys the body object carried.
 */
export function messageFromBody(route: RestRoute, bytes: Uint8Array): { message: Message; keys: string[] } {
  const input = route.method.input;
  const bodyName = route.bodyField?.name ?? "body";
  let raw: JsonValue = {};
  try {
    const text = utf8.decode(bytes);
    if (text.trim() !== "") raw = JSON.parse(text) as JsonValue;
    const twice = duplicateKey(text);
    if (twice !== undefined) throw new Error(`the key "${twice}" appears more than once`);
  } catch (e) {
    throw invalidArgumentError([{ field: bodyName, description: `malformed JSON: ${(e as Error).message}` }]);
  }

  const field = route.bodyField;
  const target: DescMessage | undefined = field === undefined ? input : field.fieldKind === "message" ? field.message : undefined;
  const prefix = field === undefined ? "" : `${field.name}.`;
  const unknown = target === undefined ? [] : unknownJsonFields(target, raw, prefix);
  if (unknown.length > 0) throw invalidArgumentError(unknown);
  const json = raw;
  const message = create(input);
  try {
    if (field === undefined) {
      return { message: fromJson(input, json, { ignoreUnknownFields: false }), keys: topLevelKeys(input, json) };
    }
    if (field.fieldKind === "message") {
      const value = fromJson(field.message, json, { ignoreUnknownFields: false });
      reflect(input, message).set(field, reflect(field.message, value));
    } else {
      const wrapper = fromJson(input, { [field.jsonName]: json }, { ignoreUnknownFields: false });
      const r = reflect(input, wrapper);
      if (r.isSet(field)) reflect(input, message).set(field, r.get(field));
    }
  } catch (e) {
    throw invalidArgumentError(diagnose(target, json, prefix, bodyName, e));
  }
  return { message, keys: target ? topLevelKeys(target, json) : [] };
}

/**
 * The update mask inferred for a PATCH route whose body is one message field, from the
 * field paths the body sets: paths through output-only and identifier fields are left out
 * (the server ignores them). Returns undefined when the route does not qualify or the request has no
 * `google.protobuf.FieldMask update_mask` field.
 */
export function inferredUpdateMask(
  route: RestRoute,
  keys: readonly string[],
): { field: DescField & { fieldKind: "message" }; mask: FieldMask } | undefined {
  if (route.httpMethod !== "PATCH" || route.bodyField?.fieldKind !== "message") return undefined;
  const maskField = findField(route.method.input, "update_mask");
  if (maskField?.fieldKind !== "message" || maskField.message.typeName !== FieldMaskSchema.typeName) return undefined;
  const resource = route.bodyField.message;
  const paths = keys.filter((path) => {
    let desc: DescMessage | undefined = resource;
    for (const name of path.split(".")) {
      const f: DescField | undefined = desc && findField(desc, name);
      if (!f) return false;
      const behaviors = getOption(f, field_behavior);
      if (behaviors.includes(FieldBehavior.OUTPUT_ONLY) || behaviors.includes(FieldBehavior.IDENTIFIER)) return false;
      desc = f.fieldKind === "message" ? f.message : undefined;
    }
    return true;
  });
  return { field: maskField, mask: create(FieldMaskSchema, { paths }) };
}

/**
 * The field paths a JSON body sets (proto names): a key naming a message field
 * whose value is a non-empty object contributes the paths inside it
 * (`oidc.client_secret`), as the implied mask of AIP-134 names leaves; any
 * other key (maps, lists, well-known types, `{}`) contributes its own name.
 */
function topLevelKeys(desc: DescMessage, json: JsonValue, prefix = ""): string[] {
  if (!isObject(json) || desc.typeName.startsWith("google.protobuf.")) return [];
  const names: string[] = [];
  for (const [key, value] of Object.entries(json)) {
    const f = findField(desc, key);
    if (!f) continue;
    const nested =
      f.fieldKind === "message" && !f.message.typeName.startsWith("google.protobuf.") && isObject(value) && Object.keys(value).length > 0
        ? topLevelKeys(f.message, value, `${prefix}${f.name}.`)
        : [];
    for (const path of nested.length > 0 ? nested : [`${prefix}${f.name}`]) if (!names.includes(path)) names.push(path);
  }
  return names;
}

function diagnose(desc: DescMessage | undefined, json: JsonValue, prefix: string, bodyName: string, error: unknown): FieldViolation[] {
  const whole = [{ field: bodyName, description: (error as Error).message }];
  if (desc === undefined || !isObject(json) || desc.typeName.startsWith("google.protobuf.")) return whole;
  const violations: FieldViolation[] = [];
  for (const [key, value] of Object.entries(json)) {
    const f = findField(desc, key);
    if (!f) continue;
    try {
      fromJson(desc, { [key]: value }, { ignoreUnknownFields: false });
    } catch (e) {
      violations.push({ field: prefix + f.name, description: (e as Error).message });
    }
  }
  return violations.length > 0 ? violations : whole;
}
