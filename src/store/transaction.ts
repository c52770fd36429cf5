import { AsyncLocalStorage } from "node:async_hooks";
import type { Kysely, Transaction } from "kysely";
import { TransactionAbortedError } from "./errors.js";
import { withSignal } from "./signal.js";
import type { Database } from "./tables.js";

/**
 * Work a caller attaches to the transactions run below it (the event of an RPC, of a push):
 * called with the transaction and the result of its work, before the commit, once per
 * `withTransactionHook` (the first transaction that commits).
 */
export type TransactionHook = (trx: Transaction<Database>, result: unknown) => Promise<void>;

const hooks = new AsyncLocalStorage<{ hook: TransactionHook; done: boolean }>();

/** Runs `work` with `hook` attached to the first transaction `inTransaction` commits below it. */
export function withTransactionHook<T>(hook: TransactionHook, work: () => Promise<T>): Promise<T> {
  return hooks.run({ hook, done: false }, work);
}

/** True when the hook of the enclosing `withTransactionHook` ran in a committed transaction. */
export function transactionHookRan(): boolean {
  return hooks.getStore()?.done ?? false;
}

/**
 * Runs `work` in a transaction. When `signal` has aborted by the time `work`
 * finishes (the call's deadline passed or its client left), or while the
 * transaction waits for a write lock, the transaction rolls back and
 * TransactionAbortedError is thrown: nothing unacknowledged is written.
 * The enclosing `withTransactionHook`'s hook, when it has not run yet, runs in the
 * same transaction: what it writes commits or rolls back with the work. When
 * `options.changed` says the work's result changed nothing (a delete of a row that
 * was not there), the hook does not run (no event is written) and stays pending.
 */
export async function inTransaction<T>(
  db: Kysely<Database>,
  signal: AbortSignal | undefined,
  work: (trx: Transaction<Database>) => Promise<T>,
  options: { changed?: (result: T) => boolean } = {},
): Promise<T> {
  const attached = hooks.getStore();
  let pending = attached && !attached.done ? attached : undefined;
  const result = await withSignal(signal, () =>
    db.transaction().execute(async (trx) => {
      const result = await work(trx);
      if (pending && options.changed && !options.changed(result)) pending = undefined;
      if (pending) await pending.hook(trx, result);
      if (signal?.aborted) throw new TransactionAbortedError("the call ended before its change was committed; nothing was written");
      return result;
    }),
  );
  if (pending) pending.done = true;
  return result;
}
