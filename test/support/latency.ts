import { performance } from "node:perf_hooks";

/**
 * Latency of a server's answers while something else runs, sampled on a fixed schedule: a request
 * to each of `urls` every `intervalMs`, whether the earlier ones were answered or not. A request
 * is timed from when it was due to its answer, so a stall of the server counts in every request
 * it held (a poller that waits for each answer before the next would count it once).
 */
export interface LatencySampler {
  /**
   * Stops sampling. `latencies` are the requests' times, ms, those not answered by now counted with
   * the time they have waited so far; `failures` the requests answered with another status than
   * 200 or not at all (a refused connection, a connect timeout), also counted in `latencies` with
   * the time they took to fail.
   */
  stop(): Promise<{ latencies: number[]; failures: number }>;
}

export function sampleLatency(urls: string[], intervalMs = 25): LatencySampler {
  const latencies: number[] = [];
  let failures = 0;
  type Entry = { due: number; controller: AbortController; counted: boolean; answered?: Promise<void> };
  const pending = new Set<Entry>();
  const count = (entry: Entry, ok: boolean) => {
    if (entry.counted) return;
    entry.counted = true;
    latencies.push(performance.now() - entry.due);
    if (!ok) failures++;
  };
  const timer = setInterval(() => {
    for (const url of urls) {
      const entry: Entry = { due: performance.now(), controller: new AbortController(), counted: false };
      entry.answered = fetch(url, { signal: entry.controller.signal })
        .then(async (res) => {
          await res.arrayBuffer();
          count(entry, res.status === 200);
        })
        .catch(() => count(entry, false))
        .finally(() => pending.delete(entry));
      pending.add(entry);
    }
  }, intervalMs);
  return {
    async stop() {
      clearInterval(timer);
      const waiting = [...pending];
      for (const entry of waiting) {
        count(entry, true);
        entry.controller.abort();
      }
      await Promise.all(waiting.map((entry) => entry.answered));
      return { latencies, failures };
    },
  };
}

/** The `q` quantile (0.99: p99) of `samples`, by the nearest rank. */
export function quantile(samples: readonly number[], q: number): number {
  if (samples.length === 0) return NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}
