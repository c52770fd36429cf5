import type { NodeRequest } from "./node-types.js";

/** Why a request body was refused: over the limit, not the length its `content-length` declared, or cut short by the client. */
export type BodyRefusal = "too-large" | "wrong-length" | "aborted";

/** A request body refused by `readBody`; each host maps it to its own answer (none for "aborted": the client is gone). */
export class BodyRefusedError extends Error {
  constructor(
    readonly reason: BodyRefusal,
    /** The limit the body was read under, bytes. */
    readonly maxBytes: number,
    /** The bytes received when it was refused, the chunk that overran included; a body refused by its `content-length` alone: that length. */
    readonly received: number,
    /** The body's `content-length`, when it declared a valid one. */
    readonly declared: number | undefined,
    options?: ErrorOptions,
  ) {
    super(
      reason === "too-large"
        ? `request body larger than ${maxBytes} bytes`
        : reason === "wrong-length"
          ? `request body of ${received} bytes, its content-length says ${declared}`
          : "the client ended the request before its body's end",
      options,
    );
    this.name = "BodyRefusedError";
  }

  /** The rest of the body was not read: an HTTP/1.1 connection must close after the answer, or the rest would be read as the next request. */
  get bodyUnread(): boolean {
    return this.reason === "too-large" || (this.reason === "wrong-length" && this.received > (this.declared ?? 0));
  }
}

/** A request's `content-length` read with `parseInt` (as the adapter reads it), or undefined when absent or not a length. */
export function declaredLength(headers: NodeRequest["headers"]): number | undefined {
  const given = headers["content-length"];
  if (typeof given !== "string") return undefined;
  const length = parseInt(given, 10);
  return Number.isSafeInteger(length) && length >= 0 ? length : undefined;
}

/**
 * The whole body of `req`, at most `maxBytes`. Rejects with BodyRefusedError: "too-large" when
 * its `content-length` or the bytes received exceed `maxBytes`, "wrong-length" when it is
 * not exactly its `content-length`, "aborted" when the client ends the request (an HTTP/2 stream
 * reset, a closed connection) before the body's end. A body refused before its end is not
 * buffered further: its rest is read and dropped, so an answer can still be written.
 */
export function readBody(req: NodeRequest, maxBytes: number): Promise<Buffer> {
  const declared = declaredLength(req.headers);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      req.off("close", onClose);
    };
    const refuse = (reason: BodyRefusal, received: number, cause?: unknown) => {
      cleanup();
      chunks.length = 0;
      const error = new BodyRefusedError(reason, maxBytes, received, declared, cause === undefined ? undefined : { cause });
      if (error.bodyUnread) req.resume();
      reject(error);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength;
      if (declared !== undefined && size > declared) refuse("wrong-length", size);
      else if (size > maxBytes) refuse("too-large", size);
      else chunks.push(chunk);
    };
    const onEnd = () => {
      if (declared !== undefined && size < declared) return refuse("wrong-length", size);
      cleanup();
      resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
    };
    const onError = (error: Error) => refuse("aborted", size, error);
    const onClose = () => refuse("aborted", size);

    if (declared !== undefined && declared > maxBytes) return refuse("too-large", declared);
    if (req.destroyed) return refuse("aborted", 0);
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
    req.on("close", onClose);
  });
}
