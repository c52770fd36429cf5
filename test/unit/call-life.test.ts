// The life of a unary call on a direct path: its lazily made signal, its deadlines, its race.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { CallLife, SWEEP_MS, SWEPT_FROM_MS } from "../../src/transport/rpc/call-life.js";

test("a signal asked for after the call ended is already aborted with the first reason", () => {
  const life = new CallLife();
  const first = new ConnectError("gone", Code.Canceled);
  life.end(first);
  life.end(new Error("later"));
  assert.equal(life.signal.aborted, true);
  assert.equal(life.signal.reason, first);
});

test("a signal made while the call runs aborts when it ends; finishing ends it CANCELED", () => {
  const life = new CallLife();
  const signal = life.signal;
  assert.equal(signal.aborted, false);
  life.finish();
  assert.equal(signal.aborted, true);
  assert.equal(ConnectError.from(signal.reason).code, Code.Canceled);
});

test("the earliest deadline wins, whichever was set first", async () => {
  const late = new CallLife();
  late.deadlineIn(20, () => "first");
  late.deadlineIn(5_000, () => "second");
  const early = new CallLife();
  early.deadlineIn(5_000, () => "first");
  early.deadlineIn(20, () => "second");
  await new Promise((resolve) => setTimeout(resolve, 60));
  assert.equal(late.reason, "first");
  assert.equal(early.reason, "second");
});

test("a far deadline (the server's cap) is swept: it ends the call within a sweep after it passes, not before; an earlier near one is timed; an ended call leaves the sweep", (t) => {
  t.mock.timers.enable({ apis: ["setInterval", "setTimeout", "Date"], now: 1_000_000 });
  const capped = new CallLife();
  capped.deadlineIn(SWEPT_FROM_MS, () => "cap");
  const both = new CallLife();
  both.deadlineIn(SWEPT_FROM_MS * 3, () => "cap");
  both.deadlineIn(SWEPT_FROM_MS + SWEEP_MS * 2, () => "caller");
  const answered = new CallLife();
  answered.deadlineIn(SWEPT_FROM_MS, () => "cap");
  answered.finish();
  const near = new CallLife();
  near.deadlineIn(SWEPT_FROM_MS * 2, () => "cap");
  near.deadlineIn(50, () => "caller");
  t.mock.timers.tick(50);
  assert.equal(near.reason, "caller", "a near deadline set after a far one is timed");
  t.mock.timers.tick(SWEPT_FROM_MS - 50 - 1);
  assert.equal(capped.ended, false, "not before its deadline");
  t.mock.timers.tick(SWEEP_MS + 1);
  assert.equal(capped.reason, "cap", "within a sweep after it");
  assert.ok(answered.reason instanceof ConnectError, "an answered call keeps the reason it ended with");
  assert.equal(both.ended, false);
  t.mock.timers.tick(SWEEP_MS * 2);
  assert.equal(both.reason, "caller", "the earlier of two swept deadlines");
});

test("a deadline already spent ends the call at once", () => {
  const life = new CallLife();
  life.deadlineIn(0, () => "spent");
  assert.equal(life.ended, true);
  assert.equal(life.reason, "spent");
});

test("race: the work's outcome, or the end's reason as an error when the call ends first", async () => {
  const answered = new CallLife();
  assert.equal(await answered.race(async () => 42, () => new Error("unused")), 42);
  const ended = new CallLife();
  const racing = ended.race(() => new Promise(() => {}), (reason) => new Error(`ended: ${String(reason)}`));
  ended.end("deadline");
  await assert.rejects(racing, /ended: deadline/);
  await assert.rejects(ended.race(async () => 1, (reason) => new Error(`already ${String(reason)}`)), /already deadline/);
  const joined = new CallLife();
  const waiting = joined.race(() => new Promise(() => {}), (reason) => new Error(`ended: ${String(reason)}`));
  await new Promise((resolve) => setImmediate(resolve)); // the race is joined by work still running in the check phase
  joined.end("gone");
  await assert.rejects(waiting, /ended: gone/);
  const failing = new CallLife();
  await assert.rejects(failing.race(() => Promise.reject(new Error("handler failed")), () => new Error("unused")), /handler failed/);
});
