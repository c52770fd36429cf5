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
