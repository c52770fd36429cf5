// The frame layer of zstd (RFC 8878, 3.1): frames, their headers, block headers and skippable
// frames, walked as the bytes stream past, without decoding a block. It checks what a decoder
// commits to before it could be stopped: the window a frame declares (the history the decoder
// allocates from the header alone, and, in fzstd, copies whole for every block) against a bound,
// and each block's size against the frame's block maximum (an RLE block's 4 bytes stand for that
// many bytes of output).
import { InventoryError } from "./errors.js";

/**
 * The largest window a layer's zstd frame may declare by default: 128 MiB, the bound zstd's own
 * decoder applies unless told otherwise (ZSTD_WINDOWLOG_LIMIT_DEFAULT, 2^27; `zstd --long=31`
 * frames need `--memory` there too).
 */
export const DEFAULT_MAX_ZSTD_WINDOW_BYTES = 128 * 1024 * 1024;

const ZSTD_MAGIC = 0xfd2fb528;
/** Skippable frames' magic numbers are 0x184D2A50 to 0x184D2A5F. */
const SKIPPABLE_MAGIC = 0x184d2a50;
const MAX_BLOCK_BYTES = 128 * 1024;

type Expecting = "magic" | "skippable size" | "frame header" | "block header";

const u32 = (bytes: Uint8Array) => (bytes[0] | (bytes[1] << 8) | (bytes[2] << 16) | (bytes[3] << 24)) >>> 0;

/** Bytes of a frame header after its descriptor byte `fhd`: window descriptor, dictionary id, content size. */
function headerBytes(fhd: number): number {
  const singleSegment = (fhd >> 5) & 1;
  const contentSizeFlag = fhd >> 6;
  const dictionaryBytes = [0, 1, 2, 4][fhd & 3];
  const contentSizeBytes = contentSizeFlag === 0 ? singleSegment : 1 << contentSizeFlag;
  return 1 + (singleSegment ? 0 : 1) + dictionaryBytes + contentSizeBytes;
}

/** The window a complete frame header declares: from its window descriptor, or its content size for a single-segment frame. */
function windowOf(header: Uint8Array): number {
  const fhd = header[0];
  if (((fhd >> 5) & 1) === 0) {
    const exponent = header[1] >> 3;
    const base = 2 ** (10 + exponent);
    return base + (base / 8) * (header[1] & 7);
  }
  const at = 1 + [0, 1, 2, 4][fhd & 3];
  switch (fhd >> 6) {
    case 0:
      return header[at];
    case 1:
      return (header[at] | (header[at + 1] << 8)) + 256;
    case 2:
      return u32(header.subarray(at));
    default:
      return u32(header.subarray(at)) + u32(header.subarray(at + 4)) * 2 ** 32;
  }
}

/**
 * A checker of a zstd stream's frames, fed its bytes in order (`check(chunk)` before the decoder
 * sees `chunk`). Throws InventoryError `<name>: a zstd frame declares a window of <n> bytes, more
 * than the <max> bytes allowed` at the header of such a frame, whichever frame of the stream it
 * is; throws Error for bytes that are not zstd frames (a bad magic number, a reserved bit or block
 * type, a block larger than its frame's block maximum).
 */
export function zstdFrameChecker(maxWindowBytes: number, name: string): (chunk: Uint8Array) => void {
  let expecting: Expecting = "magic";
  const head = new Uint8Array(18);
  let have = 0;
  /** Bytes to pass unread: a block's content (and the frame's checksum after its last block), a skippable frame. */
  let skip = 0;
  let blockMaximum = 0;
  let checksum = false;
  return (chunk) => {
    let at = 0;
    while (at < chunk.length) {
      if (skip > 0) {
        const passed = Math.min(skip, chunk.length - at);
        skip -= passed;
        at += passed;
        continue;
      }
      head[have++] = chunk[at++];
      switch (expecting) {
        case "magic": {
          if (have < 4) break;
          const magic = u32(head);
          have = 0;
          if (magic === ZSTD_MAGIC) expecting = "frame header";
          else if ((magic & 0xfffffff0) === SKIPPABLE_MAGIC) expecting = "skippable size";
          else throw new Error(`not a zstd frame (magic number 0x${magic.toString(16)})`);
          break;
        }
        case "skippable size":
          if (have < 4) break;
          skip = u32(head);
          have = 0;
          expecting = "magic";
          break;
        case "frame header": {
          if (have < headerBytes(head[0])) break;
          if (head[0] & 0x08) throw new Error("a zstd frame header sets its reserved bit");
          const window = windowOf(head);
          if (window > maxWindowBytes) throw new InventoryError(`${name}: a zstd frame declares a window of ${window} bytes, more than the ${maxWindowBytes} bytes allowed`);
          blockMaximum = Math.min(window, MAX_BLOCK_BYTES);
          checksum = ((head[0] >> 2) & 1) === 1;
          have = 0;
          expecting = "block header";
          break;
        }
        case "block header": {
          if (have < 3) break;
          const header = head[0] | (head[1] << 8) | (head[2] << 16);
          const last = (header & 1) === 1;
          const type = (header >> 1) & 3;
          const size = header >>> 3;
          if (type === 3) throw new Error("a zstd block of the reserved type");
          if (size > blockMaximum) throw new Error(`a zstd block of ${size} bytes, more than its frame's block maximum of ${blockMaximum}`);
          skip = (type === 1 ? 1 : size) + (last && checksum ? 4 : 0);
          have = 0;
          expecting = last ? "magic" : "block header";
          break;
        }
      }
    }
  };
}
