import { create, type DescMessage, type DescMethod, type DescMethodUnary, type Message, type MessageInitShape, type MessageShape } from "@bufbuild/protobuf";
import { createContextKey, type HandlerContext } from "@connectrpc/connect";

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
 * Calls the v2 handler `impl` of `method` with the request `init`, in the v1 call's context
 * (its principal, authorized scope, visibility, deadline and event hook), and answers the v2
 * message. What the v2 handler throws reaches the v1 caller unchanged. A change it commits writes
 * the v2 call's event (`v2CallKey`).
 */
export async function callV2<I extends DescMessage, O extends DescMessage>(
  method: DescMethodUnary<I, O>,
  impl: V2Handler<I, O>,
  init: MessageInitShape<I>,
  ctx: HandlerContext,
): Promise<MessageShape<O>> {
  const request = create(method.input, init);
  ctx.values.set(v2CallKey, { method, message: request });
  return create(method.output, await impl(request, ctx));
}
