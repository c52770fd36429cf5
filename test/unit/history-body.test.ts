// The Tag History body: the same text as JSON.stringify over Date#toISOString, written without them.
import assert from "node:assert/strict";
import { test } from "node:test";
import { historyJson, isoTime } from "../../src/transport/oci/history-body.js";

test("isoTime writes what Date#toISOString writes", () => {
  const times = [0, 1, 999, 1000, 59_999, 86_399_999, 86_400_000, -1, -86_400_001, 951_782_400_000, 1_764_000_000_123, 253_402_300_799_999, -62_167_219_200_000, 8.64e15, -8.64e15];
  for (let i = 0; i < 2000; i++) times.push(Math.floor((Math.random() - 0.3) * 4e12));
  for (const ms of times) assert.equal(isoTime(ms), new Date(ms).toISOString(), `at ${ms}`);
});

test("historyJson is JSON.stringify of the records, oldest first", () => {
  const records = [
    { update_time: 1_764_000_000_000, digest: "sha256:" + "a".repeat(64) },
    { update_time: 1_764_000_060_001, digest: 'sha256:"quoted\\' },
  ];
  const expected = JSON.stringify({ history: records.map((r) => ({ updateTimestamp: new Date(r.update_time).toISOString(), digest: r.digest })) });
  assert.equal(historyJson(records), expected);
  assert.equal(historyJson([]), JSON.stringify({ history: [] }));
});
