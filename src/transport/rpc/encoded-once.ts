import { isKeptAnswer } from "../../aip/kept-answer.js";

/**
 * The encoded-once answers: a kept answer (`keepAnswer`) is answered again while its data is
 * unchanged, so each wire's writer asks `encodedOnce` for its bytes and a repeated answer is
 * encoded (and compressed) once per wire format instead of once per call.
 */

/** Encodings by format key, of the kept answers encoded so far. */
const encodings = new WeakMap<object, Map<string, unknown>>();

/**
 * `encode()`, once per `format` for a kept answer (`isKeptAnswer`), every time for any other
 * message. `format` names everything the encoding depends on besides the message (wire format,
 * field naming, compression).
 */
export function encodedOnce<T>(message: object, format: string, encode: () => T): T {
  let kept = encodings.get(message);
  if (kept === undefined) {
    if (!isKeptAnswer(message)) return encode();
    kept = new Map();
    encodings.set(message, kept);
  }
  if (kept.has(format)) return kept.get(format) as T;
  const value = encode();
  kept.set(format, value);
  return value;
}
