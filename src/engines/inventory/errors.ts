// The one error of the inventory readers: the input (a layer, a package database, a lockfile, an
// SBOM) cannot be read as what it claims to be. The message names the input and says why; the
// image's report becomes FAILED with it as the reason.

export class InventoryError extends Error {
  override readonly name = "InventoryError";
}

/** The InventoryError an inventory stopped by `signal` throws: the signal's reason when it is one (a time budget), else "the inventory was stopped". */
export function stopReason(signal: AbortSignal): InventoryError {
  return signal.reason instanceof InventoryError ? signal.reason : new InventoryError("the inventory was stopped");
}
