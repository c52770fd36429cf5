import type { Kysely, Transaction } from "kysely";
import { deadlineExceeded } from "../api/errors.js";
import type { Database } from "./tables.js";

/**
 * Runs `work` in a transaction. When `signal` has aborted by the time `work`
 * finishes (the call's deadline passed or its client left), the transaction
 * rolls back and DEADLINE_EXCEEDED is thrown: nothing unacknowledged is written.
 */
export async function inTransaction<T>(
  db: Kysely<Database>,
  signal: AbortSignal | undefined,
  work: (trx: Transaction<Database>) => Promise<T>,
): Promise<T> {
  return db.transaction().execute(async (trx) => {
    const result = await work(trx);
    if (signal?.aborted) throw deadlineExceeded("the call ended before its change was committed; nothing was written");
    return result;
  });
}
