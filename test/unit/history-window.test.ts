import assert from "node:assert/strict";
import { test } from "node:test";
import { parseTimestamp, parseWindow } from "../../src/transport/oci/history-window.js";
import { RegistryFailure } from "../../src/transport/oci/registry-errors.js";

const at = (iso: string) => Date.parse(iso);

/** [text, bound, expected epoch ms] */
const VALID: Array<[string, "start" | "end", number]> = [
  ["2026-01-01", "start", at("2026-01-01T00:00:00.000Z")],
  ["2026-01-01", "end", at("2026-01-01T00:00:00.000Z")],
  ["2024-02-29", "start", at("2024-02-29T00:00:00.000Z")],
  ["2026-01-01T10:20:30Z", "start", at("2026-01-01T10:20:30.000Z")],
  ["2026-01-01t10:20:30z", "start", at("2026-01-01T10:20:30.000Z")],
  ["2026-01-01T10:20Z", "start", at("2026-01-01T10:20:00.000Z")],
  ["2026-01-01T10:20:30.5Z", "start", at("2026-01-01T10:20:30.500Z")],
  ["2026-01-01T10:20:30,5Z", "start", at("2026-01-01T10:20:30.500Z")],
  ["2026-01-01T10:20:30.123Z", "end", at("2026-01-01T10:20:30.123Z")],
  ["2026-01-01T10:20:30.123456789Z", "start", at("2026-01-01T10:20:30.124Z")],
  ["2026-01-01T10:20:30.123456789Z", "end", at("2026-01-01T10:20:30.123Z")],
  ["2026-01-01T12:20:30+02:00", "start", at("2026-01-01T10:20:30.000Z")],
  ["2026-01-01T12:20:30+0200", "start", at("2026-01-01T10:20:30.000Z")],
  ["2026-01-01T12:20:30+02", "start", at("2026-01-01T10:20:30.000Z")],
  ["2026-01-01T05:50:30-04:30", "start", at("2026-01-01T10:20:30.000Z")],
  ["2026-01-01T00:30:00+01:00", "start", at("2025-12-31T23:30:00.000Z")],
  ["2026-01-01T12:20:30.25+02:00", "end", at("2026-01-01T10:20:30.250Z")],
  // An unencoded + in a query string arrives as a space.
  ["2026-01-01T12:20:30 02:00", "start", at("2026-01-01T10:20:30.000Z")],
  ["0001-01-01", "start", Date.UTC(2000, 0, 1) - 730_119 * 86_400_000],
];

const INVALID = [
  "",
  "yesterday",
  "2026",
  "2026-01",
  "20260101",
  "2026-1-01",
  "2026-01-01T",
  "2026-01-01T10:20:30", // no zone
  "2026-01-01 10:20:30Z",
  "2026-01-01T10Z",
  "2026-01-01T10:20:30.Z",
  "2026-01-01T10:20:30.1234567890Z",
  "2026-02-30",
  "2026-13-01",
  "2026-00-10",
  "2026-01-00",
  "2026-01-01T24:00:00Z",
  "2026-01-01T10:60:00Z",
  "2026-01-01T10:20:60Z",
  "2026-01-01T10:20:30+24:00",
  "2026-01-01T10:20:30+02:60",
  "2026-01-01T10:20:30+2:00",
  "2026-01-01T10:20:30UTC",
  "1767225600000",
  " 2026-01-01",
  "2026-01-01Z",
];

test("parseTimestamp accepts ISO 8601 dates and date-times with a zone", () => {
  for (const [text, bound, expected] of VALID) assert.equal(parseTimestamp(text, bound), expected, `${text} as ${bound}`);
});

test("parseTimestamp refuses everything else", () => {
  for (const text of INVALID) {
    for (const bound of ["start", "end"] as const) assert.equal(parseTimestamp(text, bound), undefined, `${JSON.stringify(text)} as ${bound}`);
  }
});

test("parseWindow: a 400 INVALID_ARGUMENT naming the parameter", () => {
  const refused = (query: string) => {
    try {
      parseWindow(new URLSearchParams(query));
    } catch (error) {
      assert.ok(error instanceof RegistryFailure);
      return error.error;
    }
    assert.fail(`${query} was accepted`);
  };
  for (const bound of ["start", "end"]) {
    const error = refused(`${bound}=soon`);
    assert.equal(error.status, 400);
    assert.equal(error.code, "INVALID_ARGUMENT");
    assert.match(error.message, new RegExp(`^${bound} must be an ISO 8601 date`));
    assert.deepEqual(error.detail, { [bound]: "soon" });
    assert.match(refused(`${bound}=2026-01-01&${bound}=2026-01-02`).message, new RegExp(`^${bound} is given more than once`));
  }
  assert.match(refused("start=2026-01-02&end=2026-01-01").message, /start is after end/);
  assert.deepEqual(parseWindow(new URLSearchParams("start=2026-01-01&end=2026-01-01")), { start: at("2026-01-01T00:00:00Z"), end: at("2026-01-01T00:00:00Z") });
  assert.deepEqual(parseWindow(new URLSearchParams("")), {});
});
