import assert from "node:assert/strict";
import { test } from "node:test";
import { Code } from "@connectrpc/connect";
import { toConnectError } from "../../src/interceptors/api-errors.js";
import { createLogger } from "../../src/logger.js";
import { isUnavailable } from "../../src/store/dialect.js";

/** Store failures a retry may cure are UNAVAILABLE; everything else unknown stays INTERNAL. */
const withCode = (code: string, message = "store failure") => Object.assign(new Error(message), { code });

const RETRYABLE: Array<[string, Error]> = [
  ["SQLite busy", withCode("SQLITE_BUSY")],
  ["SQLite busy snapshot (two processes on one file)", withCode("SQLITE_BUSY_SNAPSHOT")],
  ["SQLite busy recovery", withCode("SQLITE_BUSY_RECOVERY")],
  ["PostgreSQL connection failure", withCode("08006")],
  ["PostgreSQL admin shutdown", withCode("57P01")],
  ["PostgreSQL too many connections", withCode("53300")],
  ["PostgreSQL deadlock", withCode("40P01")],
  ["connection refused", withCode("ECONNREFUSED")],
  ["connection reset", withCode("ECONNRESET")],
  ["pg connection terminated", new Error("Connection terminated unexpectedly")],
  ["pg pool timeout", new Error("timeout exceeded when trying to connect")],
];
const NOT_RETRYABLE: Array<[string, Error]> = [
  ["unique violation", withCode("SQLITE_CONSTRAINT_UNIQUE")],
  ["PostgreSQL syntax error", withCode("42601")],
  ["a plain bug", new TypeError("x is undefined")],
];

const silent = createLogger("silent");

for (const [name, error] of RETRYABLE) {
  test(`${name} is UNAVAILABLE`, () => {
    assert.equal(isUnavailable(error), true);
    const mapped = toConnectError(error, silent, "platform-api");
    assert.equal(mapped.code, Code.Unavailable);
    assert.doesNotMatch(mapped.message, /store failure|terminated|timeout exceeded/, "the cause is not sent");
  });
}

for (const [name, error] of NOT_RETRYABLE) {
  test(`${name} is INTERNAL`, () => {
    assert.equal(isUnavailable(error), false);
    assert.equal(toConnectError(error, silent, "platform-api").code, Code.Internal);
  });
}
