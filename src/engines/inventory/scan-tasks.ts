// The scan threads' two tasks, as their messages carry them (structured clones; byte contents moved
// or shared rather than copied: a copy of a 33 MB lockfile holds an event loop 50 to 150 ms here). `layer`: a layer's bytes as stored, pulled
// by the thread a slice at a time, read to its changes (`readLayerBytes`). `packages`: an image's
// wanted files, then its SBOMs pulled one at a time, read to its packages (`packagesOfImage`),
// sent back in batches.
import type { Distro } from "./distro.js";
import type { LayerLimits } from "./layers.js";
import type { InventoryPackage } from "./package.js";

export interface LayerTask {
  kind: "layer";
  digest: string;
  limits: LayerLimits;
  /** Most decompressed bytes: the layer's limit, or the image's remaining budget when less. */
  limit: number;
}

/** The caller's answer to a pull: the next slice, the end of the bytes, or the store's error. */
export type LayerInput = { chunk: Uint8Array } | { end: true } | { error: string };

/** A layer's outcome; the files it writes in SharedArrayBuffers, which the caller keeps and passes to a `packages` task without a copy. */
export type LayerTaskResult = { overBudget: boolean } & ({ error: string } | { changes: { removed: string[]; opaque: string[]; written: Array<[string, Uint8Array | null]> }; bytes: number });

export interface PackagesTask {
  kind: "packages";
  files: Array<[string, Uint8Array]>;
}

/** The caller's answer to a pull: the next SBOM, the end of them, or the error reading one; or, to a batch, that it took it. */
export type PackagesInput = { sbom: { bytes: Uint8Array; what: string } } | { end: true } | { error: string } | { taken: true };

/** What a thread sends during a task: a pull of the next input, or (`packages`) a batch of packages. */
export type TaskOutput = { pull: true } | { packages: InventoryPackage[] };

export interface PackagesTaskResult {
  distro?: Distro;
}

/** Packages a thread sends in one message: a batch the caller's event loop takes in a few milliseconds. */
export const PACKAGES_PER_BATCH = 5_000;

/** Most bytes of a layer sent to a thread in one message. */
export const LAYER_SLICE_BYTES = 1024 * 1024;

/** A copy of `bytes` in an ArrayBuffer of its own, to move to another thread. */
export const ownCopy = (bytes: Uint8Array): Uint8Array<ArrayBuffer> => new Uint8Array(bytes);

/** A copy of `bytes` in a SharedArrayBuffer: a message carries it to another thread without a copy. */
export function sharedCopy(bytes: Uint8Array): Uint8Array<SharedArrayBuffer> {
  const shared = new Uint8Array(new SharedArrayBuffer(bytes.byteLength));
  shared.set(bytes);
  return shared;
}

/**
 * `bytes` as a message may take them without copying on this thread: as they are when they lie in
 * a SharedArrayBuffer; with `transfer` set to their ArrayBuffer when they fill it whole and `owned`
 * (the caller gives them up); else a copy to transfer.
 */
export function handedOver(bytes: Uint8Array, owned: boolean): { bytes: Uint8Array; transfer?: ArrayBuffer } {
  if (bytes.buffer instanceof SharedArrayBuffer) return { bytes };
  if (owned && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength) return { bytes, transfer: bytes.buffer };
  const copy = ownCopy(bytes);
  return { bytes: copy, transfer: copy.buffer };
}

/** A Buffer over the bytes a message brought, without copying them. */
export const bufferOf = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
