// Reading an image's package databases out of its layers: decompression by magic number, only
// the wanted paths kept, OCI whiteouts across layers, and refusals naming the layer.
import assert from "node:assert/strict";
import { Readable } from "node:stream";
import { describe, test } from "node:test";
import { createGzip, gzipSync } from "node:zlib";
import { pack } from "tar-stream";
import { createLayerCache, InventoryError, isWantedPath, readImageFiles, type LayerInput } from "../../src/engines/inventory/index.js";
import { gzipLayer, layerInput, tarOfEntries, zstdLayer } from "../support/layers.js";

const text = (files: Map<string, Buffer>) => Object.fromEntries([...files].map(([k, v]) => [k, v.toString()]));

describe("wanted paths", () => {
  const cases: Array<[string, boolean]> = [
    ["lib/apk/db/installed", true],
    ["var/lib/dpkg/status", true],
    ["var/lib/dpkg/status.d/base-files", true],
    ["var/lib/dpkg/status.d/base-files.md5sums", false],
    ["var/lib/dpkg/status-old", false],
    ["etc/os-release", true],
    ["usr/lib/os-release", true],
    ["app/package-lock.json", true],
    ["package-lock.json", true],
    ["app/node_modules/x/package-lock.json", false],
    ["app/node_modules/.package-lock.json", true],
    ["src/Cargo.lock", true],
    ["etc/passwd", false],
  ];
  for (const [path, wanted] of cases) test(`${path}: ${wanted}`, () => assert.equal(isWantedPath(path), wanted));
});

describe("layers", () => {
  test("gzip, zstd and plain tar layers; other files are not kept; ./ prefixes are read", async () => {
    const files = await readImageFiles([
      layerInput("sha256:1", await gzipLayer([{ name: "./etc/os-release", content: "ID=alpine\n" }, { name: "bin/sh", content: "x".repeat(10_000) }])),
      layerInput("sha256:2", await zstdLayer([{ name: "lib/apk/db/installed", content: "P:zlib\nV:1.3-r2\n" }])),
      layerInput("sha256:3", await tarOfEntries([{ name: "srv/Cargo.lock", content: "[[package]]\n" }])),
    ]);
    assert.deepEqual(text(files), { "etc/os-release": "ID=alpine\n", "lib/apk/db/installed": "P:zlib\nV:1.3-r2\n", "srv/Cargo.lock": "[[package]]\n" });
  });

  test("later layers replace files, whiteouts remove them, opaque directories empty the layers below", async () => {
    const files = await readImageFiles([
      layerInput("sha256:1", await gzipLayer([
        { name: "var/lib/dpkg/status", content: "old" },
        { name: "app/package-lock.json", content: "{}" },
        { name: "opt/tool/Cargo.lock", content: "a" },
        { name: "srv/Cargo.lock", content: "b" },
        { name: "lib/apk/db/installed", content: "apk" },
      ])),
      layerInput("sha256:2", await gzipLayer([
        { name: "var/lib/dpkg/status", content: "new" },
        { name: "app/.wh.package-lock.json" },
        { name: "opt/tool/.wh..wh..opq" },
        { name: "opt/tool/Cargo.lock", content: "rewritten in the opaque directory's own layer" },
        { name: ".wh.srv" },
        { name: "lib/apk/db/installed", type: "symlink", linkname: "/elsewhere" },
      ])),
    ]);
    assert.deepEqual(text(files), { "var/lib/dpkg/status": "new", "opt/tool/Cargo.lock": "rewritten in the opaque directory's own layer" });
  });

  const refused = async (bytes: Buffer, pattern: RegExp) => {
    await assert.rejects(readImageFiles([layerInput("sha256:bad", bytes)]), (error: unknown) => error instanceof InventoryError && pattern.test(error.message));
  };

  test("corrupt and truncated compression, absolute and .. paths, a file over the limit: InventoryError naming the layer", async () => {
    const good = await gzipLayer([{ name: "var/lib/dpkg/status", content: "Package: x\n".repeat(1000) }]);
    const corrupt = Buffer.from(good);
    corrupt.fill(0x55, 20, 60);
    await refused(corrupt, /layer sha256:bad .*gzip/);
    await refused(good.subarray(0, good.length - 30), /layer sha256:bad/);
    const zstd = await zstdLayer([{ name: "etc/os-release", content: "ID=debian\n".repeat(500) }]);
    await refused(zstd.subarray(0, zstd.length - 20), /layer sha256:bad .*zstd/);
    await refused(await gzipLayer([{ name: "/etc/os-release", content: "ID=debian" }]), /"\/etc\/os-release" has an absolute path/);
    await refused(await gzipLayer([{ name: "usr/../../etc/os-release", content: "ID=debian" }]), /has a \.\. component/);
    await assert.rejects(
      readImageFiles([layerInput("sha256:big", await gzipLayer([{ name: "var/lib/dpkg/status", content: "x".repeat(5000) }]))], { maxFileBytes: 4096 }),
      /var\/lib\/dpkg\/status is larger than 4096 bytes/,
    );
    await assert.rejects(readImageFiles([layerInput("sha256:bomb", gzipSync(Buffer.alloc(4 << 20)))], { maxLayerBytes: 1 << 20 }), /decompresses to more than 1048576 bytes/);
    await assert.rejects(readImageFiles([{ digest: "sha256:gone", open: () => Readable.from((async function* () { yield Buffer.from([0x1f, 0x8b]); throw new Error("ENOENT: no such blob"); })()) }]), /layer sha256:gone/);
  });

  test("a zstd bomb (4 GiB in 128 KiB of RLE blocks) is refused at the layer limit in bounded memory", async () => {
    // A zstd frame: magic, a header with a 128 KiB window and no content size, a raw block holding
    // the tar header of one 4 GiB file, then RLE blocks of its content: each a 3-byte header (type 1,
    // 128 KiB) and one byte ("A": zero pages would not count in RSS) standing for 128 KiB.
    const blocks = 32_768;
    const tarHeader = await new Promise<Buffer>((resolve) => {
      const packer = pack();
      packer.once("data", (chunk: Buffer) => resolve(chunk.subarray(0, 512)));
      packer.entry({ name: "data/blob.bin", size: blocks * 131_072 }, () => {});
    });
    const start = Buffer.concat([Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x38]), Buffer.alloc(3), tarHeader]);
    start.writeUIntLE(512 << 3, 6, 3);
    const bomb = Buffer.alloc(start.length + blocks * 4);
    start.copy(bomb);
    for (let i = 0; i < blocks; i++) {
      const at = start.length + i * 4;
      bomb.writeUIntLE((131_072 << 3) | (1 << 1) | (i === blocks - 1 ? 1 : 0), at, 3);
      bomb[at + 3] = 0x41;
    }
    // The process's peak RSS (kB), which a synchronous burst between two samples cannot hide from.
    const before = process.resourceUsage().maxRSS;
    await assert.rejects(readImageFiles([layerInput("sha256:zstd-bomb", bomb)], { maxLayerBytes: 256 * 1024 ** 2 }), /decompresses to more than 268435456 bytes/);
    const grown = process.resourceUsage().maxRSS - before;
    assert.ok(grown < 150 * 1024, `the peak RSS grew by ${Math.round(grown / 1024)} MiB`);
  });

  test("a 1 GB layer, generated as a stream: read in bounded time and memory, its database found at the end", async () => {
    const packer = pack();
    const size = 1024 ** 3;
    const chunk = Buffer.alloc(1 << 20);
    const big = packer.entry({ name: "data/blob.bin", size }, (error) => {
      if (error) throw error;
      packer.entry({ name: "var/lib/dpkg/status", type: "file" }, Buffer.from("Package: tail\nVersion: 1\n"));
      packer.finalize();
    });
    void (async () => {
      for (let written = 0; written < size; written += chunk.length) {
        if (!big.write(chunk)) await new Promise((resolve) => big.once("drain", resolve));
      }
      big.end();
    })();
    const layer = packer.pipe(createGzip({ level: 1 }));
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
    const started = Date.now();
    try {
      const files = await readImageFiles([{ digest: "sha256:gigabyte", open: () => layer }]);
      assert.deepEqual(text(files), { "var/lib/dpkg/status": "Package: tail\nVersion: 1\n" });
    } finally {
      clearInterval(sampler);
    }
    const seconds = (Date.now() - started) / 1000;
    assert.ok(seconds < 120, `took ${seconds} s`);
    assert.ok(peak - before < 200 * 1024 * 1024, `RSS grew by ${Math.round((peak - before) / 1048576)} MiB`);
  });
});

describe("an image's layers together", () => {
  /** Layers that count their opens. */
  const counted = (layers: Record<string, Buffer>) => {
    const opens = new Map<string, number>();
    const input = (digest: string): LayerInput => ({
      digest,
      open: () => {
        opens.set(digest, (opens.get(digest) ?? 0) + 1);
        return Readable.from([layers[digest]]);
      },
    });
    return { input, opens };
  };

  test("a layer listed again is read once, and its changes apply again at each place it is listed", async () => {
    const { input, opens } = counted({
      "sha256:a": await gzipLayer([{ name: "var/lib/dpkg/status", content: "a" }, { name: "srv/Cargo.lock", content: "a" }]),
      "sha256:b": await gzipLayer([{ name: "var/lib/dpkg/status", content: "b" }, { name: "srv/.wh.Cargo.lock" }, { name: "app/package-lock.json", content: "b" }]),
    });
    const again = await readImageFiles([input("sha256:a"), input("sha256:b"), input("sha256:a")]);
    assert.deepEqual(text(again), { "var/lib/dpkg/status": "a", "srv/Cargo.lock": "a", "app/package-lock.json": "b" }, "the second a undoes what b changed of it");
    const removed = await readImageFiles([input("sha256:a"), input("sha256:a"), input("sha256:b")]);
    assert.deepEqual(text(removed), { "var/lib/dpkg/status": "b", "app/package-lock.json": "b" }, "b removes what both a wrote");
    assert.deepEqual(Object.fromEntries(opens), { "sha256:a": 2, "sha256:b": 2 }, "one read of each digest per image");
  });

  test("an image listing more layers than maxLayers is refused before any is read", async () => {
    const { input, opens } = counted({ "sha256:a": await gzipLayer([{ name: "etc/os-release", content: "ID=x" }]) });
    await assert.rejects(readImageFiles([input("sha256:a"), input("sha256:a"), input("sha256:a")], { maxLayers: 2 }), (error: unknown) => error instanceof InventoryError && /the image lists 3 layers, more than 2/.test(error.message));
    assert.equal(opens.size, 0);
  });

  test("the distinct layers of an image decompress to at most maxImageBytes together: a layer listed again counts once", async () => {
    const blob = (seed: number) => ({ name: `data/${seed}.bin`, content: Buffer.alloc(600 * 1024, seed) });
    const { input } = counted({ "sha256:a": await gzipLayer([blob(1)]), "sha256:b": await gzipLayer([blob(2)]) });
    const limits = { maxImageBytes: 1 << 20 };
    assert.equal((await readImageFiles([input("sha256:a"), input("sha256:a"), input("sha256:a")], limits)).size, 0);
    await assert.rejects(readImageFiles([input("sha256:a"), input("sha256:b")], limits), /the image's layers decompress to more than 1048576 bytes/);
    // A gzip bomb spread over layers, none over its own limit.
    const bombs = counted(Object.fromEntries([1, 2, 3, 4].map((n) => [`sha256:bomb${n}`, gzipSync(Buffer.alloc((3 << 20) + n * 512))])));
    await assert.rejects(readImageFiles([1, 2, 3, 4].map((n) => bombs.input(`sha256:bomb${n}`)), { maxLayerBytes: 4 << 20, maxImageBytes: 8 << 20 }), /the image's layers decompress to more than 8388608 bytes/);
  });

  test("a cache shared between images: a layer read for one is not read again for the next, nor a bomb's verdict; a store failure is not kept", async () => {
    const { input, opens } = counted({
      "sha256:base": await gzipLayer([{ name: "var/lib/dpkg/status", content: "Package: base\n" }]),
      "sha256:bomb": gzipSync(Buffer.alloc(4 << 20)),
      "sha256:app": await gzipLayer([{ name: "app/package-lock.json", content: "{}" }]),
    });
    const cache = createLayerCache();
    const limits = { maxLayerBytes: 1 << 20 };
    for (let platform = 0; platform < 3; platform++) {
      assert.deepEqual(Object.keys(text(await readImageFiles([input("sha256:base"), input("sha256:app")], limits, { cache }))).sort(), ["app/package-lock.json", "var/lib/dpkg/status"]);
      await assert.rejects(readImageFiles([input("sha256:base"), input("sha256:bomb")], limits, { cache }), /layer sha256:bomb decompresses to more than 1048576 bytes/);
    }
    assert.deepEqual(Object.fromEntries(opens), { "sha256:base": 1, "sha256:app": 1, "sha256:bomb": 1 });
    await readImageFiles([input("sha256:base")], { maxLayerBytes: 2 << 20 }, { cache });
    assert.equal(opens.get("sha256:base"), 2, "other limits, another read");
    let reads = 0;
    const flaky: LayerInput = {
      digest: "sha256:flaky",
      open: () => (++reads === 1 ? Readable.from((async function* () { yield Buffer.from([0x1f, 0x8b]); throw new Error("connection reset"); })()) : Readable.from([gzipSync(Buffer.alloc(1024))])),
    };
    await assert.rejects(readImageFiles([flaky], {}, { cache }), /layer sha256:flaky/);
    assert.equal((await readImageFiles([flaky], {}, { cache })).size, 0, "read again after the store failed");
  });

  test("the layer cache keeps the most recently used outcomes within its entries and bytes", () => {
    const outcome = (bytes: number) => ({ changes: { removed: [], opaque: [], written: new Map([["var/lib/dpkg/status", Buffer.alloc(bytes)]]) }, bytes });
    const cache = createLayerCache({ maxEntries: 2, maxBytes: 100 });
    cache.set("a", outcome(40));
    cache.set("b", outcome(40));
    assert.ok(cache.get("a"), "a used again");
    cache.set("c", outcome(40));
    assert.deepEqual(["a", "b", "c"].map((k) => cache.get(k) !== undefined), [true, false, true], "the least recently used went");
    cache.set("d", outcome(70));
    assert.deepEqual(["a", "c", "d"].map((k) => cache.get(k) !== undefined), [false, false, true], "bytes bound the rest");
    cache.set("e", outcome(101));
    assert.equal(cache.get("e"), undefined, "an outcome holding more than the cache may is not kept");
    cache.set("f", { error: new InventoryError("bomb") });
    assert.ok(cache.get("f") && cache.get("d"));
  });

  test("a stopped read ends at once with the signal's reason, its stalled source closed", async () => {
    const stalled = new Readable({ read() {} });
    stalled.push(Buffer.from([0x1f, 0x8b, 0x08, 0x00]));
    const controller = new AbortController();
    setTimeout(() => controller.abort(new InventoryError("reading the image took longer than 1 s")), 100);
    const started = Date.now();
    await assert.rejects(readImageFiles([{ digest: "sha256:slow", open: () => stalled }], {}, { signal: controller.signal }), /took longer than 1 s/);
    assert.ok(Date.now() - started < 5_000);
    assert.ok(stalled.destroyed);
  });
});
