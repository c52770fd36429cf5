// The events settings a server runs with: the defaults, what a configuration sets, and one
// organization's share of the delivery slots (half of them unless set).
import assert from "node:assert/strict";
import { test } from "node:test";
import { defaultEventsConfig, eventsConfigOf } from "../../src/config.js";

test("by default 16 slots, 8 of them for one organization", () => {
  const events = eventsConfigOf({});
  assert.deepEqual([events.concurrency, events.perOrganization], [16, 8]);
  assert.deepEqual(events, defaultEventsConfig);
});

test("a concurrency set alone (serve --events-concurrency) gives one organization half of it, at least one", () => {
  assert.deepEqual(
    [2, 3, 1, 40].map((concurrency) => eventsConfigOf({ events: { concurrency } }).perOrganization),
    [1, 1, 1, 20],
  );
});

test("a share set with it stands", () => {
  const events = eventsConfigOf({ events: { concurrency: 4, perOrganization: 4, pollIntervalMs: 20 } });
  assert.deepEqual([events.concurrency, events.perOrganization, events.pollIntervalMs, events.timeoutMs], [4, 4, 20, defaultEventsConfig.timeoutMs]);
});
