import { create, type DescMessage, type DescMethodUnary, type MessageInitShape, type MessageShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";

/** A v2 unary handler, as a `ServiceImpl` holds it. */
export type V2Handler<I extends DescMessage, O extends DescMessage> = (
  request: MessageShape<I>,
  context: HandlerContext,
) => Promise<MessageInitShape<O>> | MessageInitShape<O>;

/**
 * Calls the v2 handler `impl` of `method` with the request `init`, in the v1 call's context
 * (its principal, authorized scope, visibility, deadline and event hook), and answers the v2
 * message. What the v2 handler throws reaches the v1 caller unchanged.
 */
export async function callV2<I extends DescMessage, O extends DescMessage>(
  method: DescMethodUnary<I, O>,
  impl: V2Handler<I, O>,
  init: MessageInitShape<I>,
  ctx: HandlerContext,
): Promise<MessageShape<O>> {
  return create(method.output, await impl(create(method.input, init), ctx));
}
