// The zstd frame checker: what a decoder would allocate or emit from headers alone (a frame's
// window, a block's size) checked before the decoder sees the bytes, in any frame of the stream.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { describe, test } from "node:test";
import { InventoryError, readImageFiles } from "../../src/engines/inventory/index.js";
import { zstdFrameChecker } from "../../src/engines/inventory/zstd-frames.js";
import { layerInput, tarOfEntries, zstdLayer, zstdRleFrame, zstdWindowDescriptor } from "../support/layers.js";

const MiB = 1024 ** 2;

/** Feeds `bytes` to a fresh checker `size` bytes at a time. */
function check(bytes: Buffer, options: { max?: number; size?: number } = {}): void {
  const { max = 128 * MiB, size = bytes.length } = options;
  const checker = zstdFrameChecker(max, "layer sha256:x");
  for (let at = 0; at < bytes.length; at += size) checker(bytes.subarray(at, at + size));
}

/** A skippable frame (magic 0x184D2A5?) holding `content`. */
function skippable(content: Buffer): Buffer {
  const header = Buffer.alloc(8);
  header.writeUInt32LE(0x184d2a53, 0);
  header.writeUInt32LE(content.length, 4);
  return Buffer.concat([header, content]);
}

/** A single-segment frame header (no window descriptor: the window is the 8-byte content size `size`) and one empty raw block. */
function singleSegmentFrame(size: number): Buffer {
  const frame = Buffer.alloc(4 + 1 + 8 + 3);
  frame.writeUInt32LE(0xfd2fb528, 0);
  frame[4] = (3 << 6) | (1 << 5);
  frame.writeUInt32LE(size % 2 ** 32, 5);
  frame.writeUInt32LE(Math.floor(size / 2 ** 32), 9);
  frame.writeUIntLE(1, 13, 3);
  return frame;
}

describe("zstd frames", () => {
  test("what the zstd command writes passes, whole or a byte at a time, with checksums, several frames and skippable frames", async () => {
    const tar = await tarOfEntries([{ name: "var/lib/dpkg/status", content: "Package: x\nVersion: 1\n".repeat(20_000) }]);
    const plain = spawnSync("zstd", ["-q", "-c", "-3"], { input: tar }).stdout;
    const checked = spawnSync("zstd", ["-q", "-c", "-10", "--check", "--long=27"], { input: tar }).stdout;
    const stream = Buffer.concat([plain, skippable(Buffer.from("not a frame at all")), checked]);
    check(stream);
    check(stream, { size: 1 });
    check(stream, { size: 511 });
  });

  test("a frame declaring a window over the bound is refused at its header, in whichever frame of the stream it is", async () => {
    const bomb = await zstdRleFrame({ windowDescriptor: zstdWindowDescriptor(20, 7), blocks: 16 });
    const refused = (error: unknown) =>
      error instanceof InventoryError && error.message === "layer sha256:x: a zstd frame declares a window of 2013265920 bytes, more than the 134217728 bytes allowed";
    assert.throws(() => check(bomb.subarray(0, 6)), refused, "the header's six bytes suffice");
    const first = await zstdLayer([{ name: "etc/os-release", content: "ID=debian\n" }]);
    assert.throws(() => check(Buffer.concat([first, skippable(Buffer.alloc(100)), bomb]), { size: 7 }), refused);
    const over = await zstdRleFrame({ windowDescriptor: zstdWindowDescriptor(17, 1), blocks: 1 });
    assert.throws(() => check(over), /window of 150994944 bytes/);
    check(await zstdRleFrame({ windowDescriptor: zstdWindowDescriptor(17), blocks: 1 }));
  });

  test("a single-segment frame's window is its content size", () => {
    check(singleSegmentFrame(128 * MiB));
    assert.throws(() => check(singleSegmentFrame(128 * MiB + 1)), /window of 134217729 bytes/);
    assert.throws(() => check(singleSegmentFrame(2 ** 40)), /window of 1099511627776 bytes/);
  });

  test("blocks larger than their frame's block maximum, reserved types and bits, and other magic numbers are not zstd", async () => {
    // A 128 KiB window's blocks are at most 128 KiB; an RLE block of 2 MiB - 1 stands for 16 times more.
    const rle = await zstdRleFrame({ windowDescriptor: zstdWindowDescriptor(7), blocks: 1 });
    rle.writeUIntLE(((2 * MiB - 1) << 3) | (1 << 1) | 1, rle.length - 4, 3);
    assert.throws(() => check(rle), (error: unknown) => !(error instanceof InventoryError) && /a zstd block of 2097151 bytes, more than its frame's block maximum of 131072/.test((error as Error).message));
    const reserved = await zstdRleFrame({ windowDescriptor: zstdWindowDescriptor(7), blocks: 1 });
    reserved.writeUIntLE((4 << 3) | (3 << 1) | 1, reserved.length - 4, 3);
    assert.throws(() => check(reserved), /a zstd block of the reserved type/);
    const bit = await zstdRleFrame({ windowDescriptor: zstdWindowDescriptor(7), blocks: 1 });
    bit[4] |= 0x08;
    assert.throws(() => check(bit), /reserved bit/);
    assert.throws(() => check(Buffer.from("PK\x03\x04 a zip")), /not a zstd frame \(magic number 0x4034b50\)/);
  });

  test("a layer with a frame over the bound is refused by name before its window is allocated", async () => {
    const bomb = await zstdRleFrame({ windowDescriptor: zstdWindowDescriptor(20, 7), blocks: 16 });
    const before = process.resourceUsage().maxRSS;
    await assert.rejects(
      readImageFiles([layerInput("sha256:window", bomb)]),
      (error: unknown) => error instanceof InventoryError && error.message === "layer sha256:window: a zstd frame declares a window of 2013265920 bytes, more than the 134217728 bytes allowed",
    );
    assert.ok(process.resourceUsage().maxRSS - before < 64 * 1024, "nothing near the window was allocated");
    const small = await zstdRleFrame({ windowDescriptor: zstdWindowDescriptor(11), blocks: 1 });
    await assert.rejects(readImageFiles([layerInput("sha256:small", small)], { maxZstdWindowBytes: MiB }), /layer sha256:small: a zstd frame declares a window of 2097152 bytes, more than the 1048576 bytes allowed/);
    assert.equal((await readImageFiles([layerInput("sha256:small", small)])).size, 0, "within the default bound it is read");
  });
});
