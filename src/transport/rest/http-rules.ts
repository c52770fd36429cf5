import { getOption } from "@bufbuild/protobuf";
import type { DescField, DescMethod, DescService } from "@bufbuild/protobuf";
import { http } from "../../../gen/google/api/annotations_pb.js";
import type { HttpRule } from "../../../gen/google/api/http_pb.js";
import { findField, resolveFieldPath } from "./field-path.js";
import { parsePathTemplate } from "./path-template.js";
import type { PathTemplate } from "./path-template.js";

/** One HTTP binding of a unary method, validated against the method's messages. */
export interface RestRoute {
  /** Upper-case HTTP method, or "*" for a custom rule that accepts any method. */
  readonly httpMethod: string;
  readonly template: PathTemplate;
  readonly method: DescMethod;
  /** Field chain of each template variable, keyed by its dotted path as written. */
  readonly pathFields: ReadonlyMap<string, readonly DescField[]>;
  /** The rule's `body`: "" (no body), "*" or a top-level request field name. */
  readonly body: string;
  /** The request field named by `body` when it is a field name. */
  readonly bodyField: DescField | undefined;
  /** The response field named by `response_body`, or undefined for the whole message. */
  readonly responseField: DescField | undefined;
  /** Declaration order; breaks specificity ties (primary binding before additional ones). */
  readonly order: number;
}

export class HttpRuleError extends Error {
  constructor(method: DescMethod, reason: string) {
    super(`google.api.http rule of ${method.parent.typeName}.${method.name}: ${reason}`);
    this.name = "HttpRuleError";
  }
}

/**
 * Every HTTP binding (rule and additional_bindings) of the unary methods of `services`.
 * Streaming methods and methods without a rule are skipped. Throws HttpRuleError or
 * PathTemplateSyntaxError for a rule that cannot be served (bad template, unknown or
 * non-scalar path field, unknown body or response_body field).
 */
export function routesFromServices(services: readonly DescService[]): RestRoute[] {
  const routes: RestRoute[] = [];
  for (const service of services) {
    for (const method of service.methods) {
      if (method.methodKind !== "unary") continue;
      const rule = getOption(method, http);
      if (rule.pattern.case === undefined) continue;
      for (const binding of [rule, ...rule.additionalBindings]) {
        routes.push(routeFromRule(method, binding, routes.length));
      }
    }
  }
  return routes;
}

function routeFromRule(method: DescMethod, rule: HttpRule, order: number): RestRoute {
  const fail = (reason: string): never => {
    throw new HttpRuleError(method, reason);
  };
  let httpMethod: string;
  let source: string;
  switch (rule.pattern.case) {
    case "get":
    case "put":
    case "post":
    case "delete":
    case "patch":
      httpMethod = rule.pattern.case.toUpperCase();
      source = rule.pattern.value;
      break;
    case "custom":
      httpMethod = rule.pattern.value.kind === "*" ? "*" : rule.pattern.value.kind.toUpperCase();
      source = rule.pattern.value.path;
      break;
    default:
      return fail("no pattern");
  }
  const template = parsePathTemplate(source);

  const pathFields = new Map<string, DescField[]>();
  for (const v of template.variables) {
    const key = v.fieldPath.join(".");
    let chain: DescField[] = [];
    try {
      chain = resolveFieldPath(method.input, v.fieldPath);
    } catch {
      fail(`path variable ${key} is not a field of ${method.input.typeName}`);
    }
    const last = chain[chain.length - 1];
    if (last.fieldKind !== "scalar" && last.fieldKind !== "enum") fail(`path variable ${key} must be a singular scalar field`);
    pathFields.set(key, chain);
  }

  let bodyField: DescField | undefined;
  if (rule.body !== "" && rule.body !== "*") {
    bodyField = findField(method.input, rule.body) ?? fail(`body field ${rule.body} not found`);
  }
  let responseField: DescField | undefined;
  if (rule.responseBody !== "") {
    responseField = findField(method.output, rule.responseBody) ?? fail(`response_body field ${rule.responseBody} not found`);
  }
  return { httpMethod, template, method, pathFields, body: bodyField?.name ?? rule.body, bodyField, responseField, order };
}
