// The messages between a thread pool (`createThreadPool`) and its threads, and the thread's side:
// `serveTasks`. A thread works one task at a time, from its start message to its `done` or
// `failed`; meanwhile the task's caller and its thread may exchange messages (`input` to the
// thread, `output` from it), each naming the task, so a message that arrives after its task ended
// is dropped instead of reaching the next task.
import { readlinkSync } from "node:fs";
import { parentPort, type Transferable } from "node:worker_threads";

/** From the pool to a thread. */
export type ToThread = { task: number; start: unknown } | { task: number; input: unknown };

/** From a thread to the pool: `ready` once it can take tasks (with its kernel thread id on Linux), then each task's messages. */
export type FromThread =
  | { ready: { tid?: number } }
  | { task: number; output: unknown }
  | { task: number; done: unknown }
  | { task: number; failed: { name: string; message: string } };

/** A task's side of the conversation, in its thread. */
export interface TaskPort {
  /** Sends `body` to the task's caller (its `onMessage`). */
  send(body: unknown, transfer?: Transferable[]): void;
  /** The next input the caller sends this task, in order. */
  receive(): Promise<unknown>;
}

/** What a task finished with, and the buffers of it to move (not copy) to the caller. */
export interface TaskResult {
  result: unknown;
  transfer?: Transferable[];
}

/** This thread's kernel thread id (Linux: /proc/thread-self names it), which the pool reads the thread's CPU time by. */
function kernelThreadId(): number | undefined {
  try {
    const id = Number(readlinkSync("/proc/thread-self").split("/").pop());
    return Number.isSafeInteger(id) ? id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Runs in a pool's thread: works each task the pool starts with `run`, one at a time, and tells
 * the pool its result, or its error (name and message) when `run` rejects. The thread stays for the
 * next task either way; only running out of heap, a crash or the pool's `terminate` ends it.
 */
export function serveTasks(run: (start: unknown, port: TaskPort) => Promise<TaskResult>): void {
  const pool = parentPort;
  if (pool === null) throw new Error("serveTasks runs in a worker thread");
  let current = -1;
  let inputs: unknown[] = [];
  let waiting: ((input: unknown) => void) | undefined;
  pool.on("message", (message: ToThread) => {
    if ("start" in message) {
      current = message.task;
      inputs = [];
      waiting = undefined;
      const task = message.task;
      const port: TaskPort = {
        send: (body, transfer) => pool.postMessage({ task, output: body } satisfies FromThread, transfer),
        receive: () => {
          const next = inputs.shift();
          if (next !== undefined) return Promise.resolve(next);
          return new Promise((resolve) => (waiting = resolve));
        },
      };
      run(message.start, port).then(
        ({ result, transfer }) => pool.postMessage({ task, done: result } satisfies FromThread, transfer),
        (error: unknown) => {
          const { name, message } = error instanceof Error ? error : new Error(String(error));
          pool.postMessage({ task, failed: { name, message } } satisfies FromThread);
        },
      );
      return;
    }
    if (message.task !== current) return;
    if (waiting === undefined) inputs.push(message.input);
    else {
      const resolve = waiting;
      waiting = undefined;
      resolve(message.input);
    }
  });
  pool.postMessage({ ready: { tid: kernelThreadId() } } satisfies FromThread);
}
