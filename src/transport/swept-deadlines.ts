/**
 * Deadlines of many short-lived things (calls, HTTP/2 streams and sessions) checked by one sweep
 * instead of a timer each: `onDue` runs for a thing at most one sweep interval after its deadline,
 * never before it. A timer made and cleared for every call that answers in a millisecond cost a few
 * percent of a read's CPU (docs/performance.md); a map entry costs a fraction of that. The sweep's
 * interval runs only while some deadline is set, and never holds the process open.
 */
export class SweptDeadlines<T> {
  readonly #due = new Map<T, number>();
  #sweeper: NodeJS.Timeout | undefined;
  /** How late `onDue` may run. */
  readonly everyMs: number;

  /** `shortestMs`: the shortest time to a deadline this will be given; the sweep interval follows from it (`sweepIntervalMs`). */
  constructor(
    shortestMs: number,
    private readonly onDue: (thing: T) => void,
  ) {
    this.everyMs = sweepIntervalMs(shortestMs);
  }

  /** Sets (or moves) the deadline of `thing` to `ms` from now. */
  set(thing: T, ms: number): void {
    this.#due.set(thing, Date.now() + ms);
    this.#sweeper ??= setInterval(() => this.#sweep(), this.everyMs).unref();
  }

  /** Forgets the deadline of `thing`, if it has one. */
  delete(thing: T): void {
    this.#due.delete(thing);
  }

  #sweep(): void {
    const now = Date.now();
    for (const [thing, at] of this.#due) {
      if (at > now) continue;
      this.#due.delete(thing);
      this.onDue(thing);
    }
    if (this.#due.size === 0) {
      clearInterval(this.#sweeper);
      this.#sweeper = undefined;
    }
  }
}

/** The sweep interval for deadlines at least `shortestMs` away: a tenth of it, between 10 and 250 ms. */
export function sweepIntervalMs(shortestMs: number): number {
  return Math.max(10, Math.min(250, shortestMs / 10));
}
