import { AsyncLocalStorage } from "node:async_hooks";

/**
 * The signal of the transaction being opened below `withSignal` (the call's: its deadline or its
 * client leaving), for the drivers: a lock wait ends when it aborts.
 */
const signals = new AsyncLocalStorage<AbortSignal | undefined>();

export function withSignal<T>(signal: AbortSignal | undefined, work: () => Promise<T>): Promise<T> {
  return signals.run(signal, work);
}

export function currentSignal(): AbortSignal | undefined {
  return signals.getStore();
}
