import { getOption, ScalarType } from "@bufbuild/protobuf";
import type { DescEnum, DescField, DescMessage, DescMethod, DescService } from "@bufbuild/protobuf";
import { field_behavior, FieldBehavior } from "../../../gen/google/api/field_behavior_pb.js";
import { StatusSchema } from "../../../gen/google/rpc/status_pb.js";
import { requirementOf } from "../../access/rules.js";
import { routesFromServices, type RestRoute } from "./http-rules.js";
import { openApiPath, openApiPathNames } from "./openapi-paths.js";
import { restKeyOf } from "../../aip/v1/version.js";

/** A JSON Schema object as OpenAPI 3.0 writes it. */
export type Schema = Record<string, unknown>;

export interface OpenApiOptions {
  title: string;
  version: string;
  description: string;
  /** The leading comment of a method, message, field or enum in the .proto source, when known. */
  describe?: (desc: DescMethod | DescMessage | DescField | DescEnum) => string | undefined;
}

/** Well-known types written as their proto JSON form (google.protobuf JSON mapping). */
const WELL_KNOWN: Record<string, Schema> = {
  "google.protobuf.Timestamp": { type: "string", format: "date-time" },
  "google.protobuf.Duration": { type: "string", pattern: "^-?\\d+(\\.\\d+)?s$", example: "3.5s" },
  "google.protobuf.FieldMask": { type: "string", description: "Comma-separated field paths, e.g. `name,description`." },
  "google.protobuf.Empty": { type: "object" },
  "google.protobuf.Struct": { type: "object", additionalProperties: true },
  "google.protobuf.Value": {},
  "google.protobuf.ListValue": { type: "array", items: {} },
  "google.protobuf.Any": { type: "object", properties: { "@type": { type: "string" } }, required: ["@type"], additionalProperties: true },
  "google.protobuf.DoubleValue": { type: "number", format: "double", nullable: true },
  "google.protobuf.FloatValue": { type: "number", format: "float", nullable: true },
  "google.protobuf.Int64Value": { type: "string", format: "int64", nullable: true },
  "google.protobuf.UInt64Value": { type: "string", format: "uint64", nullable: true },
  "google.protobuf.Int32Value": { type: "integer", format: "int32", nullable: true },
  "google.protobuf.UInt32Value": { type: "integer", format: "int64", minimum: 0, nullable: true },
  "google.protobuf.BoolValue": { type: "boolean", nullable: true },
  "google.protobuf.StringValue": { type: "string", nullable: true },
  "google.protobuf.BytesValue": { type: "string", format: "byte", nullable: true },
};

/** Well-known types that a query parameter can carry (one string). */
const QUERY_WELL_KNOWN = new Set(["google.protobuf.Timestamp", "google.protobuf.Duration", "google.protobuf.FieldMask"]);

function scalarSchema(type: ScalarType): Schema {
  switch (type) {
    case ScalarType.DOUBLE:
      return { type: "number", format: "double" };
    case ScalarType.FLOAT:
      return { type: "number", format: "float" };
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
      return { type: "string", format: "int64" };
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return { type: "string", format: "uint64" };
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
      return { type: "integer", format: "int32" };
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return { type: "integer", format: "int64", minimum: 0, maximum: 4294967295 };
    case ScalarType.BOOL:
      return { type: "boolean" };
    case ScalarType.BYTES:
      return { type: "string", format: "byte" };
    default:
      return { type: "string" };
  }
}

/**
 * The OpenAPI 3.0 document of the REST surface: one operation per `google.api.http` binding of
 * the unary methods of `services` (the routes the transcoder serves, from the same
 * `routesFromServices`), with
 * - path parameters from the template variables (a `**` capture may hold `/`), one name per
 *   position of a path whatever field each route sets there (`openApiPathNames`),
 * - query parameters for every request field the path and the body leave (nested messages
 *   flattened to dotted lowerCamel names, repeated scalars as repeated parameters),
 * - the request body per the rule's `body` (`*`: the request message; a field: that field),
 * - the answer (the output message, its `response_body` field, or nothing for Empty) and, for
 *   every error, a `google.rpc.Status`;
 * - schemas from the messages (lowerCamel JSON names, int64 as strings, enums by name, field
 *   behaviors as `required`, `readOnly`, `writeOnly`) and the authorization rule as `security`.
 * Deterministic: the same descriptors give the same document, byte for byte once serialized.
 */
export function buildOpenApi(services: readonly DescService[], options: OpenApiOptions): Schema {
  const schemas = new Map<string, Schema>();
  const describe = (desc: DescMethod | DescMessage | DescField | DescEnum) => options.describe?.(desc)?.trim() || undefined;

  const enumRef = (desc: DescEnum): Schema => {
    if (!schemas.has(desc.typeName)) {
      const schema: Schema = { type: "string", enum: desc.values.map((v) => v.name) };
      const text = describe(desc);
      if (text) schema.description = text;
      schemas.set(desc.typeName, schema);
    }
    return { $ref: `#/components/schemas/${desc.typeName}` };
  };

  const messageRef = (desc: DescMessage): Schema => {
    const known = WELL_KNOWN[desc.typeName];
    if (known) return { ...known };
    if (!schemas.has(desc.typeName)) {
      schemas.set(desc.typeName, {}); // placeholder: recursive types refer to themselves
      schemas.set(desc.typeName, messageSchema(desc));
    }
    return { $ref: `#/components/schemas/${desc.typeName}` };
  };

  const valueSchema = (field: DescField): Schema => {
    switch (field.fieldKind) {
      case "scalar":
        return scalarSchema(field.scalar);
      case "enum":
        return enumRef(field.enum);
      case "message":
        return messageRef(field.message);
      case "list":
        return {
          type: "array",
          items: field.listKind === "scalar" ? scalarSchema(field.scalar) : field.listKind === "enum" ? enumRef(field.enum) : messageRef(field.message),
        };
      case "map":
        return {
          type: "object",
          additionalProperties: field.mapKind === "scalar" ? scalarSchema(field.scalar) : field.mapKind === "enum" ? enumRef(field.enum) : messageRef(field.message),
        };
    }
  };

  const fieldSchema = (field: DescField): Schema => {
    let schema = valueSchema(field);
    const behaviors = getOption(field, field_behavior);
    const notes: Schema = {};
    const text = [describe(field), field.oneof ? `One of \`${field.oneof.name}\`.` : undefined, behaviors.includes(FieldBehavior.IMMUTABLE) ? "Immutable." : undefined]
      .filter((t) => t !== undefined)
      .join("\n\n");
    if (text) notes.description = text;
    if (behaviors.includes(FieldBehavior.OUTPUT_ONLY)) notes.readOnly = true;
    if (behaviors.includes(FieldBehavior.INPUT_ONLY)) notes.writeOnly = true;
    if (Object.keys(notes).length === 0) return schema;
    // OpenAPI 3.0 ignores the siblings of a $ref: wrap it.
    if ("$ref" in schema) schema = { allOf: [schema] };
    return { ...schema, ...notes };
  };

  function messageSchema(desc: DescMessage): Schema {
    const properties: Record<string, Schema> = {};
    const required: string[] = [];
    for (const field of desc.fields) {
      const key = restKeyOf(desc, field);
      properties[key] = fieldSchema(field);
      if (getOption(field, field_behavior).includes(FieldBehavior.REQUIRED)) required.push(key);
    }
    const schema: Schema = { type: "object", properties };
    if (required.length > 0) schema.required = required;
    const text = describe(desc);
    if (text) schema.description = text;
    return schema;
  }

  /** Query parameters for the fields of `desc` not bound elsewhere, flattened. */
  const queryParameters = (route: RestRoute): Schema[] => {
    if (route.body === "*") return [];
    const bound = new Set([...route.pathFields.values()].map((chain) => chain.map((f) => f.name).join(".")));
    const out: Schema[] = [];
    const walk = (desc: DescMessage, prefix: string[], jsonPrefix: string[], seen: Set<string>) => {
      for (const field of desc.fields) {
        const path = [...prefix, field.name].join(".");
        if (bound.has(path)) continue;
        if (prefix.length === 0 && field.name === route.body) continue;
        if (getOption(field, field_behavior).includes(FieldBehavior.OUTPUT_ONLY)) continue;
        const name = [...jsonPrefix, field.jsonName].join(".");
        if (field.fieldKind === "message" && !QUERY_WELL_KNOWN.has(field.message.typeName)) {
          if (WELL_KNOWN[field.message.typeName] || seen.has(field.message.typeName) || prefix.length >= 3) continue;
          walk(field.message, [...prefix, field.name], [...jsonPrefix, field.jsonName], new Set([...seen, field.message.typeName]));
          continue;
        }
        if (field.fieldKind === "map" || (field.fieldKind === "list" && field.listKind === "message")) continue;
        const parameter: Schema = { name, in: "query", schema: valueSchema(field) };
        if (field.fieldKind === "list") Object.assign(parameter, { style: "form", explode: true });
        const text = describe(field);
        if (text) parameter.description = text;
        out.push(parameter);
      }
    };
    walk(route.method.input, [], [], new Set([route.method.input.typeName]));
    return out;
  };

  const paths: Record<string, Record<string, Schema>> = {};
  const operationIds = new Map<DescMethod, number>();
  const takenIds = new Set<string>();
  /** `<Service>_<Method>`, qualified by the package when another package has the same service (PingService of v1 and v2). */
  const operationIdOf = (method: DescMethod, binding: number): string => {
    const suffix = `${method.name}${binding === 0 ? "" : `_${binding}`}`;
    const short = `${method.parent.name}_${suffix}`;
    const id = takenIds.has(short) ? `${method.parent.typeName.replace(/\./g, "_")}_${suffix}` : short;
    takenIds.add(id);
    return id;
  };
  const routes = routesFromServices(services).filter((route) => route.httpMethod !== "*");
  const pathNames = openApiPathNames(routes);
  for (const route of routes) {
    const method = route.method;
    const names = pathNames.get(route)!;
    const path = openApiPath(route.template, names);
    const verb = route.httpMethod.toLowerCase();
    const item = (paths[path] ??= {});
    if (item[verb]) continue;
    const binding = operationIds.get(method) ?? 0;
    operationIds.set(method, binding + 1);

    const parameters: Schema[] = [];
    route.template.variables.forEach((variable, i) => {
      const key = variable.fieldPath.join(".");
      const chain = route.pathFields.get(key)!;
      const field = chain[chain.length - 1];
      const text = [
        describe(field),
        names[i] === key ? undefined : `The request's \`${key}\`.`,
        variable.multiSegment ? "May contain `/` (a UIDP): send it as it is, or each `/` as `%2F`." : undefined,
      ]
        .filter(Boolean)
        .join("\n\n");
      parameters.push({ name: names[i], in: "path", required: true, schema: valueSchema(field), ...(text ? { description: text } : {}) });
    });
    parameters.push(...queryParameters(route));

    const operation: Schema = {
      operationId: operationIdOf(method, binding),
      tags: [method.parent.typeName],
      summary: method.name,
      description: [describe(method), `gRPC: \`/${method.parent.typeName}/${method.name}\`.`, authorizationText(method)].filter(Boolean).join("\n\n"),
    };
    if (parameters.length > 0) operation.parameters = parameters;
    if (route.body !== "") {
      const schema = route.bodyField ? fieldSchema(route.bodyField) : messageRef(method.input);
      operation.requestBody = { required: true, content: { "application/json": { schema } } };
    }
    const output = route.responseField ? valueSchema(route.responseField) : method.output.typeName === "google.protobuf.Empty" ? undefined : messageRef(method.output);
    operation.responses = {
      "200": output ? { description: "OK", content: { "application/json": { schema: output } } } : { description: "OK (empty body)" },
      "4XX": { $ref: "#/components/responses/Status" },
      default: { $ref: "#/components/responses/Status" },
    };
    operation.security = requirementOf(method).kind === "none" ? [] : [{ bearerAuth: [] }];
    item[verb] = operation;
  }

  const status = messageRef(StatusSchema);
  return {
    openapi: "3.0.3",
    info: { title: options.title, version: options.version, description: options.description },
    servers: [{ url: "/" }],
    paths,
    components: {
      schemas: Object.fromEntries([...schemas.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
      responses: {
        Status: {
          description: "An error: a google.rpc.Status with its gRPC code, a message and details (one google.rpc.ErrorInfo, and BadRequest, PreconditionFailure or ResourceInfo where they apply). The HTTP status follows the standard mapping of the code.",
          content: { "application/json": { schema: status } },
        },
      },
      securitySchemes: {
        bearerAuth: {
          type: "http",
          scheme: "bearer",
          bearerFormat: "JWT",
          description: "A platform token: from `platform-api bootstrap` or `platform-api token`, or exchanged for another issuer's at `/sts/exchange`.",
        },
      },
    },
  };
}

function authorizationText(method: DescMethod): string | undefined {
  const requirement = requirementOf(method);
  switch (requirement.kind) {
    case "none":
      return "No credential needed.";
    case "authenticated":
      return "Any valid token.";
    case "scoped":
      return `Needs ${requirement.capabilities.map((c) => `\`${c}\``).join(", ")} on the group of \`${requirement.field.join(".")}\` or above.`;
    case "unscoped":
      return `Lists what the caller holds ${requirement.capabilities.map((c) => `\`${c}\``).join(", ")} on.`;
    default:
      return undefined;
  }
}
