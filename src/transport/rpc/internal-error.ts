import { Code, ConnectError } from "@connectrpc/connect";

/** What a call fails with when anything but a ConnectError is thrown: INTERNAL "internal error", the thrown value its cause. */
export function internalError(cause: unknown): ConnectError {
  return new ConnectError("internal error", Code.Internal, undefined, undefined, cause);
}

/** `thrown` when it is a ConnectError, else `internalError(thrown)`. */
export function asConnectError(thrown: unknown): ConnectError {
  return thrown instanceof ConnectError ? thrown : internalError(thrown);
}
