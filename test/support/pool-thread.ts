// A thread for the thread pool's tests (test/unit/thread-pool.test.ts): tasks that answer, echo what
// they are sent, spin, wait, grow their heap, throw, or crash their thread.
import { threadId } from "node:worker_threads";
import { InventoryError } from "../../src/engines/inventory/errors.js";
import { serveTasks } from "../../src/engines/inventory/thread-tasks.js";

export type PoolTestTask =
  | { kind: "thread" }
  | { kind: "echo"; times: number }
  | { kind: "spin" }
  | { kind: "heap" }
  | { kind: "refuse"; message: string }
  | { kind: "crash" };

serveTasks(async (start, port) => {
  const task = start as PoolTestTask;
  switch (task.kind) {
    case "thread":
      return { result: threadId };
    case "echo": {
      const got: unknown[] = [];
      for (let i = 0; i < task.times; i++) {
        port.send({ pull: i });
        got.push(await port.receive());
      }
      return { result: { threadId, got } };
    }
    case "spin":
      for (;;);
    case "heap": {
      const held: string[][] = [];
      for (;;) held.push(Array.from({ length: 1000 }, (_, i) => `${i}-${held.length}`));
    }
    case "refuse":
      throw new InventoryError(task.message);
    case "crash":
      setImmediate(() => {
        throw new Error("the thread broke");
      });
      return new Promise(() => {});
  }
});
