import type { Job } from "./job.js";

/**
 * Runs `pass` every `everyMs` (never when 0; and once at once with `startNow`), never two at once:
 * a look that finds a pass running joins it. A pass's failure goes to `failed`, unless the job is
 * closing (its signal aborted). `forced` is true for `drain`'s pass. `close` stops the timer, aborts
 * the pass's signal and waits for the pass running now; `drain` waits for it, then runs one
 * (forced) and waits for that.
 */
export function periodicJob(
  everyMs: number,
  pass: (signal: AbortSignal, forced: boolean) => Promise<void>,
  failed: (error: unknown) => void,
  options: { startNow?: boolean } = {},
): Required<Job> {
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
