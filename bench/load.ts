/**
 * A closed-loop load generator: `concurrency` workers each await `call()` in a
 * loop until the deadline, so exactly that many calls are in flight at any time.
 */

export interface LoadOptions {
  /** Calls in flight at once. */
  concurrency: number;
  /** Calls run but not recorded, ms (lets connections open and the JIT warm up). */
  warmupMs: number;
  /** Recorded period after the warm-up, ms. */
  durationMs: number;
  /** Called once when the recorded period starts (e.g. to sample CPU time). */
  onRecordStart?: () => void;
}

export interface LoadResult {
  /** Calls started in the recorded period that succeeded. */
  ok: number;
  /** Calls started in the recorded period that threw. */
  errors: number;
  /** The first few distinct error messages. */
  errorSamples: string[];
  /** Successful calls per second of the recorded period. */
  rps: number;
  /** Latency percentiles of the successful recorded calls, ms. */
  p50: number;
  p99: number;
}

/**
 * Runs the loop and resolves when every worker has finished its last call.
 * A call counts as failed when its promise rejects; `call` must reject on any
 * non-success response. Calls started during the warm-up are not recorded;
 * calls started before the deadline are recorded even if they end after it,
 * and the period is measured until the last of them ends.
 */
export async function runLoad(call: () => Promise<unknown>, options: LoadOptions): Promise<LoadResult> {
  const start = performance.now();
  const recordFrom = start + options.warmupMs;
  const deadline = recordFrom + options.durationMs;
  const latencies: number[] = [];
  let errors = 0;
  const errorSamples = new Set<string>();

  async function worker() {
    for (let t0 = performance.now(); t0 < deadline; t0 = performance.now()) {
      try {
        await call();
        if (t0 >= recordFrom) latencies.push(performance.now() - t0);
      } catch (error) {
        if (t0 >= recordFrom) errors++;
        if (errorSamples.size < 3) errorSamples.add(error instanceof Error ? error.message : String(error));
      }
    }
  }
  const mark = setTimeout(() => options.onRecordStart?.(), options.warmupMs);
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  clearTimeout(mark);
  const seconds = (performance.now() - recordFrom) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    ok: latencies.length,
    errors,
    errorSamples: [...errorSamples],
    rps: latencies.length / seconds,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
  };
}

/** Nearest-rank percentile of an ascending array; NaN when it is empty. */
function percentile(sorted: number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
}
