// A text file's lines read with a hard bound on each: however long a line is in the file, no more
// than the bound of it is ever held, and the file is read as a stream, never whole.

import { createReadStream } from "node:fs";

/** A line of the file: its text (UTF-8, without its `\n` or `\r\n`) and its number, from 1. */
export interface NumberedLine {
  readonly text: string;
  readonly number: number;
}

/** A line has more bytes than the bound; `number` is the line's. */
export class LineTooLongError extends Error {
  override readonly name = "LineTooLongError";

  constructor(
    readonly number: number,
    readonly maxLineBytes: number,
  ) {
    super(`line ${number} is longer than ${maxLineBytes} bytes`);
  }
}

const NEWLINE = 0x0a;
const RETURN = 0x0d;
const EMPTY = Buffer.alloc(0);

function lineOf(bytes: Buffer, number: number): NumberedLine {
  const end = bytes.length > 0 && bytes[bytes.length - 1] === RETURN ? bytes.length - 1 : bytes.length;
  return { text: bytes.toString("utf8", 0, end), number };
}

/**
 * The lines of the file at `path`, in order, a chunk's worth at a time (one read of the file: up to
 * 64 KiB); a last line without a `\n` is a line too, an empty file has none. Throws
 * LineTooLongError as soon as a line has more than `maxLineBytes` bytes before its `\n` (a `\r`
 * before it counts), having held at most `maxLineBytes` bytes of it besides the chunk; throws the
 * file's read errors. Leaving the loop early closes the file.
 */
export async function* readBoundedLines(path: string, maxLineBytes: number): AsyncGenerator<NumberedLine[]> {
  const stream = createReadStream(path, { highWaterMark: 64 * 1024 });
  // The start of a line whose end is in a later chunk: at most maxLineBytes bytes.
  let carry: Buffer = EMPTY;
  let number = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      const lines: NumberedLine[] = [];
      let start = 0;
      for (let end = chunk.indexOf(NEWLINE, start); end >= 0; end = chunk.indexOf(NEWLINE, start)) {
        number++;
        if (carry.length + end - start > maxLineBytes) throw new LineTooLongError(number, maxLineBytes);
        lines.push(lineOf(carry.length === 0 ? chunk.subarray(start, end) : Buffer.concat([carry, chunk.subarray(start, end)]), number));
        carry = EMPTY;
        start = end + 1;
      }
      if (carry.length + chunk.length - start > maxLineBytes) throw new LineTooLongError(number + 1, maxLineBytes);
      if (start < chunk.length) carry = Buffer.concat([carry, chunk.subarray(start)]);
      if (lines.length > 0) yield lines;
    }
    if (carry.length > 0) yield [lineOf(carry, number + 1)];
  } finally {
    stream.destroy();
  }
}
