// Worker threads that run tasks off the event loop: at most `size` threads, started when a task
// needs one, each with a bounded JS heap (`resourceLimits`), each task with a budget of CPU time.
// Tasks wait for a thread in order of arrival. A task whose thread runs out of heap, passes the CPU
// budget, crashes, or is stopped by its caller fails, and its thread is terminated (it may be deep
// in a synchronous call that nothing else interrupts); the next task gets a new thread.
import { setPriority } from "node:os";
import { Worker, type Transferable } from "node:worker_threads";
import { InventoryError, stopReason } from "./errors.js";
import { threadCpuClock } from "./thread-cpu.js";
import type { FromThread, ToThread } from "./thread-tasks.js";

export interface ThreadPoolOptions {
  /** The module each thread runs; it calls `serveTasks`. */
  script: URL;
  /** Threads at most. */
  size: number;
  /** Each thread's JS heap (`resourceLimits.maxOldGenerationSizeMb`), MiB. ArrayBuffers (decoded bytes, a zstd window) live outside it. */
  heapMb: number;
  /** CPU time one task may use, ms. */
  cpuBudgetMs: number;
  /**
   * The threads' scheduling priority (`os.setPriority`: 0 as the process, up to 19, the lowest), so
   * that the event loop's thread is given a core before them; applied where threads have kernel ids
   * of their own (Linux). Default 0.
   */
  priority?: number;
}

export interface TaskOptions {
  /** Names the task in its errors: `layer sha256:...`. */
  what: string;
  /** Called with each message the task's thread sends before its result. */
  onMessage?: (body: unknown) => void;
  /** Stops the task: queued, it is dropped; running, its thread is terminated. Either way it rejects with `stopReason(signal)`. */
  signal?: AbortSignal;
}

export interface Task<R> {
  /** Sends `body` to the task in its thread (`TaskPort.receive`); kept until the task starts; dropped once it ended. */
  send(body: unknown, transfer?: Transferable[]): void;
  /**
   * What the task finished with. Rejects with the task's own error (an InventoryError when its
   * thread threw one, else an Error with its message); with an InventoryError when it passed the CPU
   * budget or the heap, or was stopped; with an Error when its thread crashed or could not start,
   * or the pool was closed.
   */
  readonly result: Promise<R>;
}

export interface ThreadPool {
  /** Queues a task: `start` (and `transfer`, moved with it) is what its thread's `run` gets. */
  run<R>(start: unknown, options: TaskOptions, transfer?: Transferable[]): Task<R>;
  /** Fails the tasks queued and running, and terminates every thread. */
  close(): Promise<void>;
}

interface Thread {
  worker: Worker;
  /** Set once the thread said it is ready. */
  cpu?: () => number;
  running?: Running;
  /** The thread stopped taking tasks (terminated or exited). */
  gone: boolean;
  exited: Promise<void>;
}

interface Running {
  id: number;
  start: unknown;
  transfer?: Transferable[];
  options: TaskOptions;
  inputs: Array<{ body: unknown; transfer?: Transferable[] }>;
  thread?: Thread;
  ended: boolean;
  resolve(value: unknown): void;
  reject(error: Error): void;
  stopWatching?(): void;
}

const seconds = (ms: number) => `${ms / 1000} s`;

export function createThreadPool(options: ThreadPoolOptions): ThreadPool {
  const threads = new Set<Thread>();
  const idle: Thread[] = [];
  const queue: Running[] = [];
  let nextId = 0;
  let closed = false;

  /** Ends `task` with `outcome`, once: it no longer hears from its thread. */
  function end(task: Running, outcome: { value: unknown } | { error: Error }): void {
    if (task.ended) return;
    task.ended = true;
    task.stopWatching?.();
    if (task.thread?.running === task) task.thread.running = undefined;
    if ("error" in outcome) task.reject(outcome.error);
    else task.resolve(outcome.value);
  }

  /** Takes `thread` out of the pool and terminates it; its task, if any, ends with `error`. */
  function retire(thread: Thread, error: Error): void {
    if (!thread.gone) {
      thread.gone = true;
      threads.delete(thread);
      const at = idle.indexOf(thread);
      if (at >= 0) idle.splice(at, 1);
      void thread.worker.terminate();
    }
    if (thread.running) end(thread.running, { error });
    schedule();
  }

  function spawn(): void {
    const worker = new Worker(options.script, { resourceLimits: { maxOldGenerationSizeMb: options.heapMb } });
    worker.unref();
    let failure: (Error & { code?: string }) | undefined;
    const thread: Thread = { worker, gone: false, exited: new Promise((resolve) => worker.once("exit", () => resolve())) };
    threads.add(thread);
    worker.on("message", (message: FromThread) => {
      if (thread.gone) return;
      if ("ready" in message) {
        const tid = message.ready.tid;
        if (tid !== undefined && options.priority) {
          try {
            setPriority(tid, options.priority);
          } catch {
            // A system that refuses it runs the thread at the process's priority.
          }
        }
        thread.cpu = threadCpuClock(worker, tid);
        idle.push(thread);
        schedule();
        return;
      }
      const task = thread.running;
      if (task === undefined || task.id !== message.task) return;
      if ("output" in message) task.options.onMessage?.(message.output);
      else if ("done" in message) {
        end(task, { value: message.done });
        if (!thread.gone) idle.push(thread);
        schedule();
      } else {
        const { name, message: text } = message.failed;
        const error = name === "InventoryError" ? new InventoryError(text) : new Error(text);
        end(task, { error });
        if (!thread.gone) idle.push(thread);
        schedule();
      }
    });
    worker.on("error", (error: Error & { code?: string }) => (failure = error));
    worker.once("exit", () => {
      if (thread.gone) return;
      const task = thread.running;
      const what = task?.options.what ?? "a scan";
      let error: Error;
      if (failure?.code === "ERR_WORKER_OUT_OF_MEMORY") error = new InventoryError(`${what} needed more than the ${options.heapMb} MiB of heap a scan thread has`);
      else if (thread.cpu === undefined) error = new Error(`a scan thread could not start: ${failure?.message ?? "it exited"}`);
      else error = new Error(`${what} ended its scan thread: ${failure?.message ?? "it exited"}`);
      // A thread that could not start fails the task waiting longest, so a broken install cannot spawn threads forever.
      if (thread.cpu === undefined && !thread.running) {
        const waiting = queue.shift();
        if (waiting) end(waiting, { error });
      }
      retire(thread, error);
    });
  }

  /** Watches the CPU time `task` uses on `thread` against the budget. */
  function watch(task: Running, thread: Thread): void {
    const cpu = thread.cpu!;
    const started = cpu();
    const every = Math.min(1000, Math.max(20, options.cpuBudgetMs / 10));
    const timer = setInterval(() => {
      if (cpu() - started > options.cpuBudgetMs) retire(thread, new InventoryError(`${task.options.what} used more than ${seconds(options.cpuBudgetMs)} of CPU time`));
    }, every);
    timer.unref();
    task.stopWatching = () => clearInterval(timer);
  }

  /** Starts the tasks waiting on idle threads, and starts threads (up to `size`) for those left. */
  function schedule(): void {
    if (closed) return;
    while (queue.length > 0 && idle.length > 0) {
      const thread = idle.pop()!;
      const task = queue.shift()!;
      task.thread = thread;
      thread.running = task;
      watch(task, thread);
      thread.worker.postMessage({ task: task.id, start: task.start } satisfies ToThread, task.transfer);
      for (const input of task.inputs.splice(0)) thread.worker.postMessage({ task: task.id, input: input.body } satisfies ToThread, input.transfer);
    }
    let starting = [...threads].filter((thread) => thread.cpu === undefined).length;
    for (; queue.length > starting && threads.size < options.size; starting++) spawn();
  }

  return {
    run<R>(start: unknown, taskOptions: TaskOptions, transfer?: Transferable[]): Task<R> {
      let resolve!: (value: unknown) => void;
      let reject!: (error: Error) => void;
      const result = new Promise<R>((ok, fail) => {
        resolve = ok as (value: unknown) => void;
        reject = fail;
      });
      const task: Running = { id: nextId++, start, transfer, options: taskOptions, inputs: [], ended: false, resolve, reject };
      const signal = taskOptions.signal;
      if (closed) end(task, { error: new Error("the scan threads are closed") });
      else if (signal?.aborted) end(task, { error: stopReason(signal) });
      else {
        const onAbort = () => {
          const at = queue.indexOf(task);
          if (at >= 0) queue.splice(at, 1);
          if (task.thread && task.thread.running === task) retire(task.thread, stopReason(signal!));
          else end(task, { error: stopReason(signal!) });
        };
        signal?.addEventListener("abort", onAbort, { once: true });
        void result.catch(() => {}).finally(() => signal?.removeEventListener("abort", onAbort));
        queue.push(task);
        schedule();
      }
      return {
        result,
        send(body, bodyTransfer) {
          if (task.ended) return;
          if (task.thread === undefined) task.inputs.push({ body, transfer: bodyTransfer });
          else task.thread.worker.postMessage({ task: task.id, input: body } satisfies ToThread, bodyTransfer);
        },
      };
    },
    async close() {
      closed = true;
      const error = new Error("the scan threads are closed");
      for (const task of queue.splice(0)) end(task, { error });
      const all = [...threads];
      for (const thread of all) retire(thread, error);
      await Promise.all(all.map((thread) => thread.exited));
    },
  };
}
