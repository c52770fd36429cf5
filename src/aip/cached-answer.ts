/**
 * Cached answers: a message a handler answers again, to other calls too, while the data it was
 * built from is unchanged (`readCachedPage`). A cached answer is shared, so it is never changed after
 * it is marked; the wires may therefore encode it once (`encodedOnce` in the RPC core).
 */

const cached = new WeakSet<object>();

/** Marks `message` as a cached answer; returns it. */
export function markCachedAnswer<M extends object>(message: M): M {
  cached.add(message);
  return message;
}

/** Whether `message` was marked by `markCachedAnswer`. */
export function isCachedAnswer(message: object): boolean {
  return cached.has(message);
}
