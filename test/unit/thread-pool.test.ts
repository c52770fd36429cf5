// The thread pool scans run on: tasks in order on at most `size` threads, messages both ways, and
// a task that passes its CPU budget or its thread's heap, crashes its thread or is stopped failing
// alone, its thread replaced for the next task. The budget is CPU time: a task waiting costs none.
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { pathToFileURL } from "node:url";
import { InventoryError } from "../../src/engines/inventory/errors.js";
import { createThreadPool, type ThreadPool, type ThreadPoolOptions } from "../../src/engines/inventory/thread-pool.js";
import type { PoolTestTask } from "../support/pool-thread.js";
import { inRepo } from "../support/repo.js";

// eslint-disable-next-line no-restricted-syntax -- a module, resolved as the static imports are: the compiled thread beside the compiled test
const SCRIPT = new URL("../support/pool-thread.js", import.meta.url);
const pools: ThreadPool[] = [];
after(() => Promise.all(pools.map((pool) => pool.close())));

function pool(options: Partial<ThreadPoolOptions> = {}): ThreadPool {
  const created = createThreadPool({ script: SCRIPT, size: 1, heapMb: 64, cpuBudgetMs: 60_000, ...options });
  pools.push(created);
  return created;
}

const run = <R>(threads: ThreadPool, task: PoolTestTask, options: { signal?: AbortSignal; onMessage?: (body: unknown) => void } = {}) =>
  threads.run<R>(task, { what: `the ${task.kind} task`, ...options });

describe("thread pool", () => {
  test("tasks wait for a thread in order, and exchange messages with it while they run", async () => {
    const threads = pool({ size: 1 });
    const order: string[] = [];
    const first = run<{ threadId: number; got: unknown[] }>(threads, { kind: "echo", times: 2 }, { onMessage: (body) => first.send({ answer: (body as { pull: number }).pull }) });
    const second = run<number>(threads, { kind: "thread" });
    second.send("sent before the task started: kept for it");
    const [a, b] = await Promise.all([first.result.then((r) => (order.push("first"), r)), second.result.then((r) => (order.push("second"), r))]);
    assert.deepEqual(a.got, [{ answer: 0 }, { answer: 1 }]);
    assert.equal(b, a.threadId, "one thread worked both");
    assert.deepEqual(order, ["first", "second"]);
  });

  test("a task past its CPU budget fails with the reason, and the next task runs on a new thread", async () => {
    const threads = pool({ cpuBudgetMs: 300 });
    const before = await run<number>(threads, { kind: "thread" }).result;
    const started = Date.now();
    await assert.rejects(run(threads, { kind: "spin" }).result, (error: unknown) => error instanceof InventoryError && error.message === "the spin task used more than 0.3 s of CPU time");
    assert.ok(Date.now() - started < 10_000);
    const after = await run<number>(threads, { kind: "thread" }).result;
    assert.notEqual(after, before);
  });

  test("the budget counts CPU time: a task that waits longer than it for its input finishes", async () => {
    const threads = pool({ cpuBudgetMs: 100 });
    const task = run<{ got: unknown[] }>(threads, { kind: "echo", times: 1 }, { onMessage: () => setTimeout(() => task.send("late"), 600) });
    assert.deepEqual((await task.result).got, ["late"]);
  });

  test("a task past its thread's heap fails with the reason, and the next task runs on a new thread", async () => {
    const threads = pool({ heapMb: 24 });
    const before = await run<number>(threads, { kind: "thread" }).result;
    await assert.rejects(run(threads, { kind: "heap" }).result, (error: unknown) => error instanceof InventoryError && error.message === "the heap task needed more than the 24 MiB of heap a scan thread has");
    assert.notEqual(await run<number>(threads, { kind: "thread" }).result, before);
  });

  test("a task's own InventoryError fails it alone and keeps its thread; a crash fails it and replaces the thread", async () => {
    const threads = pool();
    const before = await run<number>(threads, { kind: "thread" }).result;
    await assert.rejects(run(threads, { kind: "refuse", message: "not a lockfile" }).result, (error: unknown) => error instanceof InventoryError && error.message === "not a lockfile");
    assert.equal(await run<number>(threads, { kind: "thread" }).result, before);
    await assert.rejects(run(threads, { kind: "crash" }).result, (error: unknown) => !(error instanceof InventoryError) && /the crash task ended its scan thread: the thread broke/.test((error as Error).message));
    assert.notEqual(await run<number>(threads, { kind: "thread" }).result, before);
  });

  test("a stopped task fails with its signal's reason, running (its thread replaced) or queued", async () => {
    const threads = pool({ size: 1 });
    const controller = new AbortController();
    const spinning = run(threads, { kind: "spin" }, { signal: controller.signal });
    const queued = run(threads, { kind: "thread" }, { signal: controller.signal });
    const next = run<number>(threads, { kind: "thread" });
    setTimeout(() => controller.abort(new InventoryError("reading the image took longer than 0.2 s")), 200);
    for (const task of [spinning, queued]) await assert.rejects(task.result, /reading the image took longer than 0.2 s/);
    assert.equal(typeof (await next.result), "number", "the task behind them ran on a new thread");
    await assert.rejects(run(threads, { kind: "thread" }, { signal: controller.signal }).result, /took longer than 0.2 s/, "a task stopped before it is queued");
  });

  test("closing fails the tasks queued and running, and later ones", async () => {
    const threads = createThreadPool({ script: SCRIPT, size: 1, heapMb: 64, cpuBudgetMs: 60_000 });
    const running = run(threads, { kind: "spin" });
    const queued = run(threads, { kind: "thread" });
    await new Promise((resolve) => setTimeout(resolve, 200));
    await threads.close();
    for (const task of [running, queued]) await assert.rejects(task.result, /the scan threads are closed/);
    await assert.rejects(run(threads, { kind: "thread" }).result, /the scan threads are closed/);
  });

  test("a thread that cannot start fails the task that waited for it, not every task forever", async () => {
    const threads = pool({ script: pathToFileURL(inRepo("no-such-thread.js")) });
    await assert.rejects(run(threads, { kind: "thread" }).result, /a scan thread could not start/);
  });
});
