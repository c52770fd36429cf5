// The one error of the inventory readers: the input (a layer, a package database, a lockfile, an
// SBOM) cannot be read as what it claims to be. The message names the input and says why; the
// image's report becomes FAILED with it as the reason.

export class InventoryError extends Error {
  override readonly name = "InventoryError";
}
