import { fstatSync, writeSync } from "node:fs";
import { isatty } from "node:tty";

/**
 * Whole lines to standard output that never end the process. A line that cannot be written (a
 * full disk, a reader that went away) is dropped and counted in `dropped`; nothing is thrown or
 * emitted. Output to a file or a device is written with write(2) at once, so lines are written
 * again once there is room; to a pipe, a socket or a terminal it goes through `process.stdout`
 * (ordered, with Node's buffering), whose errors are caught: once its reader is gone (EPIPE) every
 * later line is dropped.
 */
export interface LineSink {
  /** Writes `line` (ending in a newline); false when it was dropped. */
  write(line: string): boolean;
  /** Lines dropped so far. */
  readonly dropped: number;
}

const FD = 1;

function createStdoutLines(): LineSink {
  let dropped = 0;
  const drop = () => {
    dropped++;
    return false;
  };
  let write: (line: string) => boolean;
  if (writesToFile()) {
    write = (line) => {
      const bytes = Buffer.from(line);
      try {
        for (let written = 0; written < bytes.length; ) written += writeSync(FD, bytes, written);
        return true;
      } catch {
        return drop();
      }
    };
  } else {
    const out = process.stdout;
    // A failed write is reported here (once per write that failed, then the stream is destroyed).
    out.on("error", () => {});
    write = (line) => {
      if (out.destroyed || !out.writable) return drop();
      out.write(line, (error) => error && dropped++);
      return true;
    };
  }
  return {
    write,
    get dropped() {
      return dropped;
    },
  };
}

/** Whether standard output is a regular file or a device other than a terminal (what Node writes synchronously). */
function writesToFile(): boolean {
  try {
    const stat = fstatSync(FD);
    return stat.isFile() || (stat.isCharacterDevice() && !isatty(FD));
  } catch {
    return false;
  }
}

let stdout: LineSink | undefined;

/** The process's standard output as lines (made on first use). */
export function stdoutLines(): LineSink {
  return (stdout ??= createStdoutLines());
}
