import { randomUUID } from "node:crypto";
import { hostname } from "node:os";

/** A background pass run now and then: what the feed sync and the retention workers share. */
export interface PeriodicPass {
  /** Stops the timer, aborts the pass's signal and waits for the pass running now, if any. */
  close(): Promise<void>;
  /** Waits for the pass running now, then runs one (forced) and waits for it. */
  drain(): Promise<void>;
}

/**
 * Runs `pass` every `everyMs` (never when 0; and once at once with `startNow`), never two at once:
 * a look that finds a pass running joins it. A pass's failure goes to `failed`, unless the worker
 * is closing (its signal aborted). `forced` is true for `drain`'s pass.
 */
export function periodicPass(
  everyMs: number,
  pass: (signal: AbortSignal, forced: boolean) => Promise<void>,
  failed: (error: unknown) => void,
  options: { startNow?: boolean } = {},
): PeriodicPass {
  const stopping = new AbortController();
  let running: Promise<void> | undefined;
  const tick = (forced: boolean): Promise<void> =>
    (running ??= pass(stopping.signal, forced)
      .catch((error: unknown) => {
        if (!stopping.signal.aborted) failed(error);
      })
      .finally(() => (running = undefined)));
  const timer = everyMs === 0 ? undefined : setInterval(() => void tick(false), everyMs);
  timer?.unref();
  if (options.startNow && everyMs !== 0) void tick(false);
  return {
    async close() {
      clearInterval(timer);
      stopping.abort();
      await running;
    },
    async drain() {
      await running;
      await tick(true);
    },
  };
}

/** A lease holder's name for a worker of this process: the host, the process and a random suffix. */
export function leaseHolder(): string {
  return `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
}
