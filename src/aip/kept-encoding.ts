/**
 * Encodings of answers that are kept and shared: a handler that answers the same message object
 * again while its data is unchanged (`keptAnswer`) marks it with `keepEncodings`, and each wire's
 * writer asks `encodedOnce` for its bytes, so a repeated answer is encoded (and compressed) once
 * per wire format instead of once per call. A marked message must never be changed afterwards:
 * its kept encodings would no longer be its encodings.
 */

/** Encodings by format key, of the messages marked by `keepEncodings`. */
const encodings = new WeakMap<object, Map<string, unknown>>();

/** Marks `message` as a kept answer: from now on its encodings are kept with it. */
export function keepEncodings<M extends object>(message: M): M {
  if (!encodings.has(message)) encodings.set(message, new Map());
  return message;
}

/**
 * `encode()`, once per `format` for a message marked by `keepEncodings`, every time for any
 * other. `format` names everything the encoding depends on besides the message (wire format,
 * field naming, compression).
 */
export function encodedOnce<T>(message: object, format: string, encode: () => T): T {
  const kept = encodings.get(message);
  if (kept === undefined) return encode();
  if (kept.has(format)) return kept.get(format) as T;
  const value = encode();
  kept.set(format, value);
  return value;
}
