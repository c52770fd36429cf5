import { create, type DescMessage, type DescMethod, type DescMethodUnary, type Message, type MessageInitShape, type MessageShape } from "@bufbuild/protobuf";
import { createContextKey, type HandlerContext } from "@connectrpc/connect";
import { ApiError, invalidArgument } from "../errors.js";

/** A v2 unary handler, as a `ServiceImpl` holds it. */
export type V2Handler<I extends DescMessage, O extends DescMessage> = (
  request: MessageShape<I>,
  context: HandlerContext,
) => Promise<MessageInitShape<O>> | MessageInitShape<O>;

/** The v2 call a v1 call made: the event interceptor writes that call's event. */
export const v2CallKey = createContextKey<{ method: DescMethod; message: Message } | undefined>(undefined, {
  description: "the v2 method and request a v1 handler called",
});

/**
 * Where a v2 request's fields are in the v1 request, by path prefix (proto names):
 * `{ identity: "" }` names `identity.name` as `name` (a v1 Update takes the resource itself),
 * `{ parent: "parent_id", "role_binding.identity_uid": "role_binding.identity" }`.
 */
export type FieldRenames = Record<string, string>;

/**
 * Calls the v2 handler `impl` of `method` with the request `init`, in the v1 call's context
 * (its principal, authorized scope, visibility, deadline and event hook), and answers the v2
 * message. A change it commits writes the v2 call's event (`v2CallKey`). What it throws reaches
 * the v1 caller unchanged, except that INVALID_ARGUMENT names the v1 request's fields (`renames`).
 */
export async function callV2<I extends DescMessage, O extends DescMessage>(
  method: DescMethodUnary<I, O>,
  impl: V2Handler<I, O>,
  init: MessageInitShape<I>,
  ctx: HandlerContext,
  renames: FieldRenames = {},
): Promise<MessageShape<O>> {
  const request = create(method.input, init);
  ctx.values.set(v2CallKey, { method, message: request });
  try {
    return create(method.output, await impl(request, ctx));
  } catch (error) {
    throw withV1Fields(error, renames);
  }
}

function withV1Fields(error: unknown, renames: FieldRenames): unknown {
  if (!(error instanceof ApiError) || error.kind !== "INVALID_ARGUMENT" || Object.keys(renames).length === 0) return error;
  const renamed = invalidArgument(error.fieldViolations.map((v) => ({ ...v, field: v1Field(v.field, renames) })));
  return new ApiError(error.kind, renamed.message, error.reason, renamed.fieldViolations, [], error.resource, error.metadata);
}

/** `field` with its longest renamed prefix (whole segments) replaced. */
export function v1Field(field: string, renames: FieldRenames): string {
  let best: string | undefined;
  for (const from of Object.keys(renames)) {
    const whole = field === from || field.startsWith(`${from}.`) || field.startsWith(`${from}[`);
    if (whole && (best === undefined || from.length > best.length)) best = from;
  }
  if (best === undefined) return field;
  const to = renames[best];
  const rest = field.slice(best.length);
  return to === "" ? rest.replace(/^\./, "") : `${to}${rest}`;
}
