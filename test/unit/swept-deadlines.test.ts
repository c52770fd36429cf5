// Deadlines checked by one sweep (`SweptDeadlines`): never early, at most one interval late, moved
// and forgotten on request, the sweep's interval running only while a deadline is set.
import assert from "node:assert/strict";
import { test } from "node:test";
import { SweptDeadlines, sweepIntervalMs } from "../../src/transport/swept-deadlines.js";

test("the sweep interval is a tenth of the shortest deadline, between 10 and 250 ms", () => {
  assert.deepEqual([50, 1_000, 2_500, 30_000].map(sweepIntervalMs), [10, 100, 250, 250]);
});

test("a thing is due within an interval after its deadline, never before; a moved deadline counts from the move; a forgotten one never comes", (t) => {
  t.mock.timers.enable({ apis: ["setInterval", "Date"], now: 1_000_000 });
  const due: string[] = [];
  const deadlines = new SweptDeadlines<string>(1_000, (thing) => due.push(thing));
  assert.equal(deadlines.everyMs, 100);
  deadlines.set("a", 1_000);
  deadlines.set("moved", 1_000);
  deadlines.set("forgotten", 1_000);
  t.mock.timers.tick(500);
  deadlines.set("moved", 1_000);
  deadlines.delete("forgotten");
  t.mock.timers.tick(499);
  assert.deepEqual(due, [], "not before the deadline");
  t.mock.timers.tick(1 + deadlines.everyMs);
  assert.deepEqual(due, ["a"]);
  t.mock.timers.tick(500);
  assert.deepEqual(due, ["a", "moved"]);
  t.mock.timers.tick(10_000);
  assert.deepEqual(due, ["a", "moved"], "each once; the forgotten never");
});

test("a deadline set after the sweep stopped (none left) starts it again and is met", (t) => {
  t.mock.timers.enable({ apis: ["setInterval", "Date"], now: 1_000_000 });
  let sweeps = 0;
  const deadlines = new SweptDeadlines<number>(1_000, () => sweeps++);
  deadlines.set(1, 150);
  t.mock.timers.tick(10_000);
  assert.equal(sweeps, 1);
  deadlines.set(2, 150);
  t.mock.timers.tick(200);
  assert.equal(sweeps, 2);
});
