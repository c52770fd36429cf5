import { isCachedAnswer } from "../../aip/cached-answer.js";

/**
 * The encoded-once answers: a cached answer (`markCachedAnswer`) is answered again while its data is
 * unchanged, so each wire's writer asks `encodedOnce` for its bytes and a repeated answer is
 * encoded (and compressed) once per wire format instead of once per call.
 */

/** Encodings by format key, of the cached answers encoded so far. */
const encodings = new WeakMap<object, Map<string, unknown>>();

/**
 * `encode()`, once per `format` for a cached answer (`isCachedAnswer`), every time for any other
 * message. `format` names everything the encoding depends on besides the message (wire format,
 * field naming, compression).
 */
export function encodedOnce<T>(message: object, format: string, encode: () => T): T {
  let byFormat = encodings.get(message);
  if (byFormat === undefined) {
    if (!isCachedAnswer(message)) return encode();
    byFormat = new Map();
    encodings.set(message, byFormat);
  }
  if (byFormat.has(format)) return byFormat.get(format) as T;
  const value = encode();
  byFormat.set(format, value);
  return value;
}
