import type { Job } from "./job.js";
import { gave, type OrganizationTurns } from "./fair-claim.js";

export interface QueueJobOptions<T> {
  /** How often it claims, ms. */
  everyMs: number;
  /** Items worked at once. */
  concurrency: number;
  /**
   * Claims at most `room` items, each for a lease (so several processes on one database never work
   * one at once); with `turns`, none of an organization holding its share, each taken noted (`took`).
   */
  claim(room: number): Promise<T[]>;
  /** Works one claimed item to its end; `signal` aborts when the job closes. */
  work(item: T, signal: AbortSignal): Promise<void>;
  /** The job's share per organization, and each item's organization (given back when its work ends). */
  fair?: { turns: OrganizationTurns; organizationOf(item: T): string };
  /** Called when an item's work ends, whatever its outcome, before the next claim. */
  settled?(item: T): void;
  /** Claims again as soon as an item's work ends, so a backlog drains at the work's pace, not one claim per interval. */
  claimOnSettle?: boolean;
  /** Runs before the first claim; `drain` and `close` wait for it. */
  starting?: Promise<void>;
  /** A claim failed (not called once the job closes). */
  claimFailed(error: unknown): void;
  /** An item's work threw. */
  workFailed(item: T, error: unknown): void;
}

/**
 * Works a queue in the server process: every `everyMs` (and once `starting` ended) it claims up to
 * the room left of `concurrency` and starts each item's work, never two claims at once (a claim
 * asked for while one runs runs once it ends). `drain` claims and works until a claim finds nothing
 * and nothing was in flight; `close` stops claiming, aborts the work in flight (its signal, with the
 * reason "the job stopped") and waits for it.
 */
export function queueJob<T>(options: QueueJobOptions<T>): Required<Job> {
  const stopping = new AbortController();
  const inFlight = new Set<Promise<void>>();
  let claiming = false;
  let again = false;
  let closed = false;

  async function tick(): Promise<number> {
    if (closed) return 0;
    if (claiming) {
      again = true;
      return 0;
    }
    claiming = true;
    again = false;
    let claimed = 0;
    try {
      const room = options.concurrency - inFlight.size;
      if (room <= 0) return 0;
      const items = await options.claim(room);
      claimed = items.length;
      for (const item of items) {
        const work = options
          .work(item, stopping.signal)
          .catch((error: unknown) => options.workFailed(item, error))
          .finally(() => {
            if (options.fair) gave(options.fair.turns, options.fair.organizationOf(item));
            options.settled?.(item);
            inFlight.delete(work);
            if (options.claimOnSettle) void tick();
          });
        inFlight.add(work);
      }
    } catch (error) {
      if (!closed) options.claimFailed(error);
    } finally {
      claiming = false;
    }
    if (again) await tick();
    return claimed;
  }

  const starting = options.starting ?? Promise.resolve();
  const timer = setInterval(() => void tick(), options.everyMs);
  timer.unref();
  void starting.then(() => tick());
  return {
    async close() {
      closed = true;
      clearInterval(timer);
      stopping.abort(new Error("the job stopped"));
      await starting;
      await Promise.allSettled([...inFlight]);
    },
    async drain() {
      await starting;
      for (;;) {
        while (claiming) await new Promise((resolve) => setTimeout(resolve, 5));
        const hadWork = inFlight.size > 0;
        const claimed = await tick();
        await Promise.allSettled([...inFlight]);
        if (claimed === 0 && !hadWork) return;
      }
    },
  };
}
