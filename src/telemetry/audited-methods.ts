import { ScalarType, type DescField, type DescMethod } from "@bufbuild/protobuf";
import { MethodOptions_IdempotencyLevel } from "@bufbuild/protobuf/wkt";
import { PUBLIC_INFRASTRUCTURE_SERVICES } from "../access/rules.js";

/**
 * Which RPCs the audit log records, and what each one changed.
 *
 * A method changes something unless its proto declares `idempotency_level = NO_SIDE_EFFECTS`:
 * the one declaration the event interceptor (which records an event of every change) and the
 * authentication interceptor (which refreshes grants after every change) already go by, so the
 * audit log, the events and the grants agree on what a change is. gRPC health and reflection
 * (`PUBLIC_INFRASTRUCTURE_SERVICES`) describe the server and change nothing.
 */

/** How the calls of a changing method are audited. */
export interface AuditedMethod {
  /** `platform.iam.v2.GroupsService/CreateGroup`. */
  action: string;
  /**
   * What a call changed: the answer's `uid` (a created or updated resource) when it has one,
   * else the request's `uid`, `id` or `parent`, else the `uid` of its resource field (UpdateGroup's
   * `group`), else `scope` (the group the call was authorized on), else "".
   */
  resourceOf(request: unknown, answer: unknown, scope: string | undefined): string;
}

/** The audit of `method`, or undefined for a read (a method declared `NO_SIDE_EFFECTS`). */
export function auditedMethod(method: DescMethod): AuditedMethod | undefined {
  if (PUBLIC_INFRASTRUCTURE_SERVICES.has(method.parent.typeName)) return undefined;
  if (method.idempotency === MethodOptions_IdempotencyLevel.NO_SIDE_EFFECTS) return undefined;
  const own = method.input.fields.filter((f) => ["uid", "id", "parent"].includes(f.name) && isString(f)).sort((a, b) => rank(a) - rank(b));
  const nested = method.input.fields.filter((f) => f.fieldKind === "message" && f.message.fields.some((g) => g.name === "uid" && isString(g)));
  const answerKey = method.output.fields.find((f) => (f.name === "uid" || f.name === "id") && isString(f))?.localName;
  return {
    action: `${method.parent.typeName}/${method.name}`,
    resourceOf(request, answer, scope) {
      const fromAnswer = answerKey === undefined ? undefined : text(answer, answerKey);
      if (fromAnswer) return fromAnswer;
      for (const field of own) {
        const value = text(request, field.localName);
        if (value) return value;
      }
      for (const field of nested) {
        const value = text((request as Record<string, unknown> | undefined)?.[field.localName], "uid");
        if (value) return value;
      }
      return scope ?? "";
    },
  };
}

const rank = (field: DescField) => ["uid", "id", "parent"].indexOf(field.name);

const isString = (field: DescField) => field.fieldKind === "scalar" && field.scalar === ScalarType.STRING;

function text(message: unknown, key: string): string | undefined {
  const value = message !== null && typeof message === "object" ? (message as Record<string, unknown>)[key] : undefined;
  return typeof value === "string" && value !== "" ? value : undefined;
}
