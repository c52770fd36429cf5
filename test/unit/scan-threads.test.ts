// Inventories on scan threads read what they read in the caller's thread: the same files from the
// same layers (a shared cache, a layer listed again, whiteouts), the same refusals and stops, and
// the same packages from files and SBOMs; the caller's thread only moves bytes.
import assert from "node:assert/strict";
import { Readable } from "node:stream";
import { after, describe, test } from "node:test";
import {
  createLayerCache,
  createScanThreads,
  InventoryError,
  packagesOfImage,
  readImageFiles,
  type AttachedSbom,
  type LayerInput,
} from "../../src/engines/inventory/index.js";
import { gzipLayer, tarOfEntries, zstdLayer, zstdRleFrame, zstdWindowDescriptor } from "../support/layers.js";

const threads = createScanThreads({ size: 2 });
after(() => threads.close());

const text = (files: Map<string, Buffer>) => Object.fromEntries([...files].map(([k, v]) => [k, v.toString()]));

/** Layers that count their opens; each open a fresh stream of the same bytes. */
function counted(layers: Record<string, Buffer>) {
  const opens = new Map<string, number>();
  const input = (digest: string): LayerInput => ({
    digest,
    open: () => {
      opens.set(digest, (opens.get(digest) ?? 0) + 1);
      return Readable.from([layers[digest]]);
    },
  });
  return { input, opens };
}

async function* sbomsOf(...documents: object[]): AsyncGenerator<AttachedSbom> {
  for (const [i, document] of documents.entries()) yield { bytes: Buffer.from(JSON.stringify(document)), what: `sbom ${i}` };
}

describe("scan threads", () => {
  test("read the same files as the caller's thread, a layer listed again once, a cache shared with it", async () => {
    const { input, opens } = counted({
      "sha256:a": await gzipLayer([{ name: "etc/os-release", content: "ID=alpine\n" }, { name: "srv/Cargo.lock", content: "a" }, { name: "bin/sh", content: "x".repeat(100_000) }]),
      "sha256:b": await zstdLayer([{ name: "lib/apk/db/installed", content: "P:zlib\nV:1.3-r2\n" }, { name: "srv/.wh.Cargo.lock" }]),
      "sha256:c": await tarOfEntries([{ name: "app/package-lock.json", content: "{}" }]),
    });
    const layers = () => [input("sha256:a"), input("sha256:b"), input("sha256:c"), input("sha256:a")];
    const here = await readImageFiles(layers());
    const cache = createLayerCache();
    const there = await readImageFiles(layers(), {}, { reader: threads.readLayer, cache });
    assert.deepEqual(text(there), text(here));
    assert.deepEqual(Object.keys(text(there)).sort(), ["app/package-lock.json", "etc/os-release", "lib/apk/db/installed", "srv/Cargo.lock"]);
    await readImageFiles(layers(), {}, { reader: threads.readLayer, cache });
    assert.deepEqual(Object.fromEntries(opens), { "sha256:a": 2, "sha256:b": 2, "sha256:c": 2 }, "once for the caller's thread, once for the threads, then the cache");
  });

  test("refuse what the caller's thread refuses, naming the layer; a bomb's verdict is kept, a store failure is not", async () => {
    const window = await zstdRleFrame({ windowDescriptor: zstdWindowDescriptor(20, 7), blocks: 16 });
    await assert.rejects(
      readImageFiles([{ digest: "sha256:window", open: () => Readable.from([window]) }], {}, { reader: threads.readLayer }),
      (error: unknown) => error instanceof InventoryError && error.message === "layer sha256:window: a zstd frame declares a window of 2013265920 bytes, more than the 134217728 bytes allowed",
    );
    const { input, opens } = counted({ "sha256:bomb": await gzipLayer([{ name: "data/zero", content: Buffer.alloc(4 << 20) }]) });
    const cache = createLayerCache();
    for (let i = 0; i < 2; i++) {
      await assert.rejects(readImageFiles([input("sha256:bomb")], { maxLayerBytes: 1 << 20 }, { reader: threads.readLayer, cache }), /layer sha256:bomb decompresses to more than 1048576 bytes/);
    }
    assert.equal(opens.get("sha256:bomb"), 1);
    let reads = 0;
    const flaky: LayerInput = {
      digest: "sha256:flaky",
      open: () =>
        ++reads === 1
          ? Readable.from(
              (async function* () {
                yield Buffer.from([0x1f, 0x8b]);
                throw new Error("connection reset");
              })(),
            )
          : Readable.from([Buffer.alloc(0)]),
    };
    await assert.rejects(readImageFiles([flaky], {}, { reader: threads.readLayer, cache }), /layer sha256:flaky .*connection reset/);
    assert.equal((await readImageFiles([flaky], {}, { reader: threads.readLayer, cache })).size, 0, "read again after the store failed");
  });

  test("a stopped read ends at once with the signal's reason, its stalled source closed", async () => {
    const stalled = new Readable({ read() {} });
    stalled.push(Buffer.from([0x1f, 0x8b, 0x08, 0x00]));
    const controller = new AbortController();
    setTimeout(() => controller.abort(new InventoryError("reading the image took longer than 1 s")), 100);
    await assert.rejects(readImageFiles([{ digest: "sha256:slow", open: () => stalled }], {}, { signal: controller.signal, reader: threads.readLayer }), /took longer than 1 s/);
    assert.ok(stalled.destroyed);
  });

  test("the packages of files and SBOMs are those the caller's thread finds, in batches past one message's", async () => {
    const crates = Array.from({ length: 12_000 }, (_, i) => `[[package]]\nname = "c${i}"\nversion = "1.0.${i}"\nsource = "registry+https://github.com/rust-lang/crates.io-index"\n`).join("\n");
    const files = new Map([
      ["etc/os-release", Buffer.from("ID=alpine\nVERSION_ID=3.19.1\n")],
      ["lib/apk/db/installed", Buffer.from("P:zlib\nV:1.3-r2\no:zlib\n")],
      ["srv/Cargo.lock", Buffer.from(`version = 3\n\n${crates}`)],
    ]);
    const spdx = { spdxVersion: "SPDX-2.3", packages: [{ externalRefs: [{ referenceType: "purl", referenceLocator: "pkg:npm/left-pad@1.3.0" }, { referenceType: "purl", referenceLocator: "pkg:cargo/c1@1.0.1" }] }] };
    const here = await packagesOfImage(files, sbomsOf(spdx, { predicateType: "something else" }));
    const there = await threads.packagesOfImage(files, sbomsOf(spdx, { predicateType: "something else" }));
    assert.deepEqual(there, here);
    assert.equal(there.packages.length, 12_002);
    assert.deepEqual(there.distro, { id: "alpine", versionId: "3.19.1" });
  });

  test("an SBOM that is not JSON fails with the reader's InventoryError; a failure to read one is the caller's own error", async () => {
    const broken = async function* (): AsyncGenerator<AttachedSbom> {
      yield { bytes: Buffer.from("SPDXVersion: SPDX-2.3"), what: "the SBOM sha256:s" };
    };
    await assert.rejects(threads.packagesOfImage(new Map(), broken()), (error: unknown) => error instanceof InventoryError && error.message.startsWith("the SBOM sha256:s is not JSON"));
    const failure = new Error("the content store is down");
    const unreadable = async function* (): AsyncGenerator<AttachedSbom> {
      throw failure;
    };
    await assert.rejects(threads.packagesOfImage(new Map(), unreadable()), (error: unknown) => error === failure);
  });
});
