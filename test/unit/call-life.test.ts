// The life of a unary call on a direct path: its lazily made signal, its deadlines, its race.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { CallLife } from "../../src/transport/rpc/call-life.js";

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
