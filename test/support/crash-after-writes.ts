/**
 * `platform-api` with a crash point, for the kill -9 test: run as
 * `node --import tsx test/support/crash-after-writes.ts serve ...` with
 * CRASH_AFTER_WRITES=<k>, the process SIGKILLs itself right after the k-th
 * INSERT or UPDATE of the `tags` table has executed: a kill at a statement
 * boundary inside the transaction of a tag move, after the tag row changed and
 * before its history record is written (or the transaction commits). A kill
 * from outside at a random time rarely falls there: calls spend most of their
 * time outside SQL.
 */
import SqliteDatabase from "better-sqlite3";
import { main } from "../../src/cli/main.js";

const limit = Number(process.env.CRASH_AFTER_WRITES);
if (!Number.isInteger(limit) || limit < 1) throw new Error("CRASH_AFTER_WRITES must be a positive integer");
const WRITE = /^\s*(insert\s+into|update)\s+"tags"/i;

let writes = 0;
type Method = (...args: unknown[]) => unknown;
const prepare = SqliteDatabase.prototype.prepare as (this: SqliteDatabase.Database, source: string) => SqliteDatabase.Statement;
SqliteDatabase.prototype.prepare = function (this: SqliteDatabase.Database, source: string) {
  const statement = prepare.call(this, source);
  if (!WRITE.test(source)) return statement;
  const counted = statement as unknown as Record<"run" | "all" | "get", Method>;
  for (const name of ["run", "all", "get"] as const) {
    const original = counted[name];
    counted[name] = function (this: unknown, ...args: unknown[]) {
      const result = original.apply(this, args);
      if (++writes === limit) process.kill(process.pid, "SIGKILL");
      return result;
    };
  }
  return statement;
} as typeof SqliteDatabase.prototype.prepare;

await main(process.argv.slice(2));
