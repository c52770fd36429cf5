import { getOption, isMessage, type DescMessage, type DescMethod, type Message } from "@bufbuild/protobuf";
import { EmptySchema, MethodOptions_IdempotencyLevel } from "@bufbuild/protobuf/wkt";
import type { Interceptor } from "@connectrpc/connect";
import { event_type } from "../../gen/platform/common/v1/events_pb.js";
import { isUidp, rootOf } from "../aip/uidp.js";
import { v2CallKey } from "../aip/v1/call.js";
import { principalKey, scopeKey } from "../access/principal.js";
import { apiEventType, emitEvent, eventBody } from "../domains/events/index.js";
import { withTransactionHook } from "../store/transaction.js";

/**
 * Records the event of every RPC that changes something (every method not declared
 * `idempotency_level = NO_SIDE_EFFECTS`), in the transaction of the change: the handler's
 * first committed `inTransaction` writes it to the outbox (`emitEvent`), so a change that
 * rolls back has no event and one that commits has it; a transaction whose `changed` says it
 * changed nothing (an idempotent delete of a missing row) writes none. Handlers write nothing for
 * it, but a handler whose RPC answers a message (Create, Update, custom methods) returns that
 * answer from its transaction's work, so the event can carry it (event-coverage.test.ts checks each).
 *
 * - type: `<prefix>.api.<event_type>.v1`, `event_type` the method's option
 *   (`platform.common.v1.event_type`, the hosted service's spelling: `iam.group.created`);
 *   a method without it gets `<domain>.<resource>.<verb>` from Create/Update/Delete<Resource>,
 *   else `<domain>.<method in snake_case>`;
 * - body and body type (`ce-bodytype`): the RPC's answer when it answers a message other than
 *   Empty (the created or updated resource, with its uid and times), else (a Delete) its
 *   request; as `eventBody` writes it: protojson without secret and INPUT_ONLY fields;
 * - subject: the answer's `uid` (v1: `id`), else its first `*_uid` field, else the uid of what
 *   the transaction returned, else the request's `uid` or its resource's `uid`, else the group the
 *   call was authorized on (AcceptTerms: the group whose terms were accepted);
 * - group: the group the call was authorized on, else the subject's organization;
 * - actor: the caller's identity;
 * - a v1 call writes the event of the v2 call it made (`v2CallKey`): the v2 method's type and
 *   the v2 call's answer or request, so subscribers see one event whichever version wrote.
 */
export function eventInterceptor(options: { typePrefix: string; now: () => number }): Interceptor {
  // Derived once per method, not per call.
  const types = new Map<DescMethod, string>();
  const typeOf = (method: DescMethod) => types.get(method) ?? types.set(method, eventType(options.typePrefix, method)).get(method)!;
  return (next) => async (req) => {
    if (req.stream || req.method.idempotency === MethodOptions_IdempotencyLevel.NO_SIDE_EFFECTS) return next(req);
    return withTransactionHook(async (trx, result) => {
      const { method, message } = req.contextValues.get(v2CallKey) ?? { method: req.method as DescMethod, message: req.message as Message };
      const answer = method.output.typeName !== EmptySchema.typeName && isMessage(result, method.output) ? result : undefined;
      const scope = req.contextValues.get(scopeKey);
      const subject = (answer && answerUid(method.output, answer)) ?? uidOf(result) ?? requestUid(message as unknown as Record<string, unknown>) ?? scope ?? "";
      const group = scope ?? (isUidp(subject) ? rootOf(subject) : "");
      const principal = req.contextValues.get(principalKey);
      const [desc, body] = answer ? [method.output, answer] : [method.input, message];
      await emitEvent(
        trx,
        { type: typeOf(method), subject, group, actor: { subject: principal?.identityUid ?? "" }, body: eventBody(desc, body), bodyType: desc.typeName },
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

/**
 * The answer's `uid` (a v1 answer's `id`), else its first non-empty `*_uid` field
 * (RedeemGroupInvite's `role_binding_uid`), or its `identity` (Register's Session).
 */
function answerUid(desc: DescMessage, answer: Message): string | undefined {
  const rank = (name: string) => (name === "uid" ? 0 : name === "id" ? 1 : name.endsWith("_uid") || name === "identity" ? 2 : 3);
  const fields = desc.fields.filter((f) => rank(f.name) < 3).sort((a, b) => rank(a.name) - rank(b.name));
  for (const field of fields) {
    const value = (answer as unknown as Record<string, unknown>)[field.localName];
    if (typeof value === "string" && value !== "") return value;
  }
  return undefined;
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
