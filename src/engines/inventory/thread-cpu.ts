// The CPU time a worker thread has used, read from outside it (the thread may be deep in a
// synchronous call that reports nothing): on Linux the kernel's count for the thread
// (/proc/self/task/<tid>/stat, user and system time, in clock ticks of 1/100 s, the USER_HZ every
// Linux ABI fixes); elsewhere, or when the thread's id is unknown, the time its event loop was not
// idle, which counts time the thread waited for a core as well.
import { readFileSync } from "node:fs";
import type { Worker } from "node:worker_threads";

const TICKS_PER_SECOND = 100;

/** CPU time thread `tid` (a kernel thread id of this process) has used, ms; undefined when the kernel does not say. */
function kernelCpuMs(tid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
    // Fields after the command name (which may hold spaces), from the 3rd: utime is the 14th, stime the 15th.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? (ticks * 1000) / TICKS_PER_SECOND : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A clock of the CPU time `worker` (kernel thread `tid`, when known) has used, ms, from an arbitrary
 * origin: compare two readings. Once the thread is gone it keeps its last reading.
 */
export function threadCpuClock(worker: Worker, tid: number | undefined): () => number {
  if (tid === undefined || kernelCpuMs(tid) === undefined) return () => worker.performance.eventLoopUtilization().active;
  let last = 0;
  return () => (last = kernelCpuMs(tid) ?? last);
}
