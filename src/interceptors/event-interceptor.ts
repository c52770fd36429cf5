import { toJson, type DescMessage, type DescMethod, type Message } from "@bufbuild/protobuf";
import { MethodOptions_IdempotencyLevel } from "@bufbuild/protobuf/wkt";
import { getOption } from "@bufbuild/protobuf";
import type { Interceptor } from "@connectrpc/connect";
import { field_behavior, FieldBehavior } from "../../gen/google/api/field_behavior_pb.js";
import { event_type } from "../../gen/platform/common/v1/events_pb.js";
import { isUidp, rootOf } from "../api/uidp.js";
import { v2CallKey } from "../api/v1/call.js";
import { principalKey, scopeKey } from "../auth/principal.js";
import { apiEventType, emitEvent } from "../domains/events/store/outbox.js";
import { withTransactionHook } from "../store/transaction.js";

/**
 * Records the event of every RPC that changes something (every method not declared
 * `idempotency_level = NO_SIDE_EFFECTS`), in the transaction of the change: the handler's
 * first committed `inTransaction` writes it to the outbox (`emitEvent`), so a change that
 * rolls back has no event and one that commits has it; a transaction whose `changed` says it
 * changed nothing (an idempotent delete of a missing row) writes none. Handlers write nothing for it.
 *
 * - type: `<prefix>.api.<event_type>.v1`, `event_type` the method's option
 *   (`platform.common.v1.event_type`, the hosted service's spelling: `iam.group.created`);
 *   a method without it gets `<domain>.<resource>.<verb>` from Create/Update/Delete<Resource>,
 *   else `<domain>.<method in snake_case>`;
 * - subject: the `uid` of what the transaction returned (a created row), else the request's
 *   `uid` or its resource's `uid`;
 * - group: the group the call was authorized on, else the subject's organization;
 * - actor: the caller's identity; body: the request as protojson without INPUT_ONLY fields
 *   (secrets such as an identity provider's client secret never leave in an event); body
 *   type (`ce-bodytype`): the request message's full name;
 * - a v1 call writes the event of the v2 call it made (`v2CallKey`): the v2 method's type and the
 *   v2 request's subject, body and body type, so subscribers see one event whichever version wrote.
 */
export function eventInterceptor(options: { typePrefix: string; now: () => number }): Interceptor {
  // Derived once per method, not per call.
  const types = new Map<DescMethod, string>();
  const typeOf = (method: DescMethod) => types.get(method) ?? types.set(method, eventType(options.typePrefix, method)).get(method)!;
  return (next) => async (req) => {
    if (req.stream || req.method.idempotency === MethodOptions_IdempotencyLevel.NO_SIDE_EFFECTS) return next(req);
    return withTransactionHook(async (trx, result) => {
      const { method, message } = req.contextValues.get(v2CallKey) ?? { method: req.method as DescMethod, message: req.message as Message };
      const subject = uidOf(result) ?? requestUid(message as unknown as Record<string, unknown>) ?? "";
      const scope = req.contextValues.get(scopeKey);
      const group = scope ?? (isUidp(subject) ? rootOf(subject) : "");
      const principal = req.contextValues.get(principalKey);
      await emitEvent(
        trx,
        {
          type: typeOf(method),
          subject,
          group,
          actor: { subject: principal?.identityUid ?? "" },
          body: withoutInputOnly(method.input, toJson(method.input, message, { alwaysEmitImplicit: false }) as Record<string, unknown>),
          bodyType: method.input.typeName,
        },
        options.now(),
      );
    }, () => next(req));
  };
}

/** The CloudEvent type of an RPC's event. */
export function eventType(prefix: string, method: DescMethod): string {
  const declared = getOption(method, event_type);
  if (declared !== "") return apiEventType(prefix, declared);
  const domain = method.parent.typeName.split(".")[1];
  const standard = /^(Create|Update|Delete)(.+)$/.exec(method.name);
  if (standard) {
    const verb = { Create: "created", Update: "updated", Delete: "deleted" }[standard[1] as "Create" | "Update" | "Delete"];
    return `${prefix}.api.${domain}.${snake(standard[2])}.${verb}.v1`;
  }
  return `${prefix}.api.${domain}.${snake(method.name)}.v1`;
}

function snake(name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase();
}

function uidOf(value: unknown): string | undefined {
  const uid = value && typeof value === "object" ? (value as { uid?: unknown }).uid : undefined;
  return typeof uid === "string" && uid !== "" ? uid : undefined;
}

function requestUid(message: Record<string, unknown>): string | undefined {
  const own = uidOf(message);
  if (own) return own;
  for (const value of Object.values(message)) {
    const nested = uidOf(value);
    if (nested) return nested;
  }
  return undefined;
}

/** Drops the fields marked INPUT_ONLY (at any depth) from a protojson object. */
function withoutInputOnly(desc: DescMessage, json: Record<string, unknown>): Record<string, unknown> {
  for (const field of desc.fields) {
    const value = json[field.jsonName];
    if (value === undefined) continue;
    if (getOption(field, field_behavior).includes(FieldBehavior.INPUT_ONLY)) {
      delete json[field.jsonName];
    } else if (field.message && value && typeof value === "object") {
      const items = field.fieldKind === "list" ? (value as Record<string, unknown>[]) : field.fieldKind === "message" ? [value as Record<string, unknown>] : [];
      for (const item of items) if (item && typeof item === "object") withoutInputOnly(field.message, item);
    }
  }
  return json;
}
