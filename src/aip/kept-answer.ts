/**
 * Kept answers: a message a handler answers again, to other calls too, while the data it was
 * built from is unchanged (`readKeptPage`). A kept answer is shared, so it is never changed after
 * it is marked; the wires may therefore encode it once (`encodedOnce` in the RPC core).
 */

const kept = new WeakSet<object>();

/** Marks `message` as a kept answer; returns it. */
export function keepAnswer<M extends object>(message: M): M {
  kept.add(message);
  return message;
}

/** Whether `message` was marked by `keepAnswer`. */
export function isKeptAnswer(message: object): boolean {
  return kept.has(message);
}
