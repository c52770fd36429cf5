import { spawnSync } from "node:child_process";
import { Readable } from "node:stream";
import { gzipSync } from "node:zlib";
import { pack } from "tar-stream";

/**
 * Layer tarballs for tests, written by tar-stream's packer: regular files, whiteouts, symlinks,
 * and any entry name (absolute or `..` ones included), gzip'd by zlib or zstd'd by the `zstd`
 * command (Debian's zstd package).
 */

export type LayerEntry = { name: string; content?: string | Buffer; type?: "file" | "symlink" | "directory"; linkname?: string };

export async function tarOfEntries(entries: LayerEntry[]): Promise<Buffer> {
  const packer = pack();
  const chunks: Buffer[] = [];
  const done = new Promise<void>((resolve, reject) => {
    packer.on("data", (c: Buffer) => chunks.push(c));
    packer.on("end", resolve);
    packer.on("error", reject);
  });
  for (const e of entries) {
    const type = e.type ?? "file";
    if (type === "file") packer.entry({ name: e.name, type }, typeof e.content === "string" ? Buffer.from(e.content) : (e.content ?? Buffer.alloc(0)));
    else packer.entry({ name: e.name, type, linkname: e.linkname });
  }
  packer.finalize();
  await done;
  return Buffer.concat(chunks);
}

export const gzipLayer = async (entries: LayerEntry[]) => gzipSync(await tarOfEntries(entries));

export async function zstdLayer(entries: LayerEntry[]): Promise<Buffer> {
  const result = spawnSync("zstd", ["-q", "-c", "-3"], { input: await tarOfEntries(entries), maxBuffer: 1 << 30 });
  if (result.status !== 0) throw new Error(`zstd failed: ${result.stderr}`);
  return result.stdout;
}

export const layerInput = (digest: string, bytes: Buffer) => ({ digest, open: () => Readable.from([bytes]) });

/** The zstd Window_Descriptor byte of a window of `2^(10 + exponent) * (1 + mantissa / 8)` bytes. */
export const zstdWindowDescriptor = (exponent: number, mantissa = 0) => (exponent << 3) | mantissa;

/**
 * One zstd frame of a tar holding one file `name` of `blocks` * 128 KiB of `fill` bytes: the frame
 * header (the window `windowDescriptor` gives, no content size, no checksum), a raw block holding
 * the file's tar header, then an RLE block (4 bytes) for each 128 KiB of the file. Tiny for what
 * it stands for; it ends where the file's content does, without the tar's closing zero blocks
 * (which tar readers do not require).
 */
export async function zstdRleFrame(options: { windowDescriptor: number; blocks: number; name?: string; fill?: number }): Promise<Buffer> {
  const { windowDescriptor, blocks, name = "data/blob.bin", fill = 0x41 } = options;
  const tarHeader = await new Promise<Buffer>((resolve) => {
    const packer = pack();
    packer.once("data", (chunk: Buffer) => resolve(chunk.subarray(0, 512)));
    packer.entry({ name, size: blocks * 131_072 }, () => {});
  });
  const start = Buffer.concat([Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, windowDescriptor]), Buffer.alloc(3), tarHeader]);
  start.writeUIntLE((512 << 3) | (blocks === 0 ? 1 : 0), 6, 3);
  const frame = Buffer.alloc(start.length + blocks * 4);
  start.copy(frame);
  for (let i = 0; i < blocks; i++) {
    const at = start.length + i * 4;
    frame.writeUIntLE((131_072 << 3) | (1 << 1) | (i === blocks - 1 ? 1 : 0), at, 3);
    frame[at + 3] = fill;
  }
  return frame;
}
