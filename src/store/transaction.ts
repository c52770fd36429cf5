import { AsyncLocalStorage } from "node:async_hooks";
import type { Kysely, Transaction } from "kysely";
import { TransactionAbortedError } from "./errors.js";
import { withSignal } from "./signal.js";

/**
 * Work a caller attaches to the transactions run below it (the event of an RPC, of a push):
 * called with the transaction and the result of its work, before the commit, once per
 * `withTransactionHook` (the first transaction that commits).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type TransactionHook = (trx: Transaction<any>, result: unknown) => Promise<void>;

const hooks = new AsyncLocalStorage<{ hook: TransactionHook; done: boolean }>();

/** Runs `work` with `hook` attached to the first transaction `inTransaction` commits below it. */
export function withTransactionHook<T>(hook: TransactionHook, work: () => Promise<T>): Promise<T> {
  return hooks.run({ hook, done: false }, work);
}

/** True when the hook of the enclosing `withTransactionHook` ran in a committed transaction. */
export function transactionHookRan(): boolean {
  return hooks.getStore()?.done ?? false;
}

/** A count of slots, taken in the order asked for. */
class Slots {
  private free: number;
  private readonly waiting: Array<() => void> = [];

  constructor(count: number) {
    this.free = count;
  }

  /** Takes a slot; an abort of `signal` while waiting throws TransactionAbortedError. */
  async take(signal: AbortSignal | undefined): Promise<void> {
    if (this.free > 0 && this.waiting.length === 0) {
      this.free--;
      return;
    }
    await new Promise<void>((resolve, reject) => {
      const granted = () => {
        signal?.removeEventListener("abort", aborted);
        resolve();
      };
      const aborted = () => {
        this.waiting.splice(this.waiting.indexOf(granted), 1);
        reject(new TransactionAbortedError("the call ended while its change waited for a connection; nothing was written"));
      };
      if (signal?.aborted) return aborted();
      signal?.addEventListener("abort", aborted, { once: true });
      this.waiting.push(granted);
    });
  }

  give(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free++;
  }
}

const transactionSlots = new WeakMap<object, Slots>();

/** At most `count` transactions of `db` at once; more wait their turn (PostgreSQL: connections left for reads). */
export function limitTransactions<DB>(db: Kysely<DB>, count: number): void {
  transactionSlots.set(db, new Slots(count));
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
export async function inTransaction<DB, T>(
  db: Kysely<DB>,
  signal: AbortSignal | undefined,
  work: (trx: Transaction<DB>) => Promise<T>,
  options: { changed?: (result: T) => boolean } = {},
): Promise<T> {
  const attached = hooks.getStore();
  let pending = attached && !attached.done ? attached : undefined;
  const slots = transactionSlots.get(db);
  await slots?.take(signal);
  try {
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
  } finally {
    slots?.give();
  }
}
