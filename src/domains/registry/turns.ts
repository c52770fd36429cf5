// Long loops of the report worker, in slices: between two slices it waits for the check phase of
// the event loop's turn, so the requests waiting on the same thread (both hosts') are answered
// meanwhile. A SQLite statement resolves without leaving the turn it ran in: a loop of statements
// never gives the event loop back by itself.

/** Resolves at the check phase of the event loop's turn, after the I/O that was waiting. */
export const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Packages (or names, or rows) one slice holds: a few milliseconds of work on each. */
export const ITEMS_PER_TURN = 1_000;

/** Runs `work` on each slice of `items` (ITEMS_PER_TURN at most) in order, waiting for the next turn between two. */
export async function inTurns<T>(items: readonly T[], work: (slice: readonly T[]) => void | Promise<void>): Promise<void> {
  for (let at = 0; at < items.length; at += ITEMS_PER_TURN) {
    if (at > 0) await nextTurn();
    await work(items.slice(at, at + ITEMS_PER_TURN));
  }
}
