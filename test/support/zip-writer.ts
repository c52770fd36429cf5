// A minimal zip writer for tests (no zip-writing package is installed): stored or deflated entries,
// names taken as given (unsafe ones included), and an optional false uncompressed size to build
// archives that lie in their headers.

import * as zlib from "node:zlib";

export interface ZipWriterEntry {
  readonly name: string;
  readonly data: Buffer | string;
  /** Default "deflate". */
  readonly method?: "store" | "deflate";
  /** The uncompressed size to write in the headers instead of the true one. */
  readonly declaredSize?: number;
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(data: Buffer): number {
  // zlib.crc32 exists from Node 20.15; the table is for older releases.
  const native = (zlib as { crc32?: (data: Buffer) => number }).crc32;
  if (native) return native(data);
  let crc = 0xffffffff;
  for (const byte of data) crc = CRC_TABLE[(crc ^ byte) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** The bytes of a zip archive holding `entries` in order (names flagged UTF-8; DOS time 1980-01-01). */
export function makeZip(entries: readonly ZipWriterEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const data = Buffer.isBuffer(entry.data) ? entry.data : Buffer.from(entry.data);
    const stored = entry.method === "store";
    const body = stored ? data : zlib.deflateRawSync(data);
    const name = Buffer.from(entry.name, "utf8");
    const fields = (header: Buffer, at: number) => {
      header.writeUInt16LE(20, at); // version needed
      header.writeUInt16LE(0x0800, at + 2); // flags: UTF-8 name
      header.writeUInt16LE(stored ? 0 : 8, at + 4); // method
      header.writeUInt16LE(0, at + 6); // time
      header.writeUInt16LE(0x21, at + 8); // date: 1980-01-01
      header.writeUInt32LE(crc32(data), at + 10);
      header.writeUInt32LE(body.length, at + 14);
      header.writeUInt32LE(entry.declaredSize ?? data.length, at + 18);
      header.writeUInt16LE(name.length, at + 22);
      header.writeUInt16LE(0, at + 24); // extra field length
    };
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    fields(local, 4);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4); // version made by
    fields(central, 6);
    central.writeUInt32LE(offset, 42); // local header offset (comment length, disk, attributes stay 0)
    locals.push(local, name, body);
    centrals.push(central, name);
    offset += local.length + name.length + body.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}
