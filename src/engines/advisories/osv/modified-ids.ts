// osv.dev's index of an ecosystem's folder: `modified_id.csv`, one `<RFC 3339 modified>,<id>` line
// per record, newest first, beside the records (`<id>.json`).

import { LineTooLongError, readBoundedLines } from "./bounded-lines.js";
import { OsvFeedError } from "./errors.js";
import { compareOsvInstants, parseOsvTime, type OsvInstant } from "./time.js";

/** One line of `modified_id.csv`. */
export interface ModifiedId {
  readonly modified: string;
  readonly id: string;
  /** `modified`, parsed (compareOsvInstants orders them). */
  readonly instant: OsvInstant;
}

/** How much of an index one read takes in. */
export interface ModifiedIdsLimits {
  /** Bytes of one line (a valid line has at most about 300: a time, a comma and an id of at most 255). */
  readonly maxLineBytes: number;
  /** Lines read before the first one that is not later than `after` (empty lines count). */
  readonly maxLines: number;
}

export const MODIFIED_IDS_LIMITS: ModifiedIdsLimits = { maxLineBytes: 1024, maxLines: 1_000_000 };

/** An id that is safe as a URL path segment and a file name: OSV ids are `PREFIX-...` of these characters. */
const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9._:+-]{0,254}$/;

/** The line `text` (number `number`) read, or undefined when it is empty; throws OsvFeedError when it is not `<RFC 3339>,<id>`. */
function parseLine(text: string, number: number, source: string): ModifiedId | undefined {
  const line = text.trim();
  if (line === "") return undefined;
  const comma = line.indexOf(",");
  const modified = line.slice(0, comma);
  const id = line.slice(comma + 1);
  const instant = comma < 0 ? undefined : parseOsvTime(modified);
  if (!instant) throw new OsvFeedError(`${source}:${number}`, "not a `<RFC 3339 modified>,<id>` line");
  if (!SAFE_ID.test(id)) throw new OsvFeedError(`${source}:${number}`, `${JSON.stringify(id.slice(0, 80))} is not an OSV id`);
  return { modified, id, instant };
}

/**
 * The lines of the `modified_id.csv` file at `path` whose `modified` is later than `after` (all
 * when undefined), in file order, a chunk of the file's worth at a time (never an empty array),
 * read as a stream; reading stops at the first line that is not later, since the file lists the
 * newest first. Empty lines are skipped. Memory holds one chunk of the file and its lines, and
 * one line of at most `limits.maxLineBytes`, whatever the file's size. Throws
 * OsvFeedError (naming `source` and the line) for a line longer than `limits.maxLineBytes`, a line
 * that is not `<RFC 3339>,<id>` or names an id unsafe as a file name, and when more than
 * `limits.maxLines` lines come before the stop (naming `source`); throws a TypeError when `after`
 * is not an RFC 3339 date-time.
 */
export async function* readModifiedIds(path: string, source: string, after?: string, limits: ModifiedIdsLimits = MODIFIED_IDS_LIMITS): AsyncGenerator<ModifiedId[]> {
  const stop = after === undefined ? undefined : parseOsvTime(after);
  if (after !== undefined && !stop) throw new TypeError(`not an RFC 3339 date-time: ${JSON.stringify(after)}`);
  try {
    for await (const lines of readBoundedLines(path, limits.maxLineBytes)) {
      const newer: ModifiedId[] = [];
      for (const { text, number } of lines) {
        const read = parseLine(text, number, source);
        if (read && stop && compareOsvInstants(read.instant, stop) <= 0) {
          if (newer.length > 0) yield newer;
          return;
        }
        if (number > limits.maxLines) {
          throw new OsvFeedError(source, `more than ${limits.maxLines} lines${after === undefined ? "" : ` newer than ${after}`} (at most ${limits.maxLines} are read in one sync)`);
        }
        if (read) newer.push(read);
      }
      if (newer.length > 0) yield newer;
    }
  } catch (error) {
    if (error instanceof LineTooLongError) throw new OsvFeedError(`${source}:${error.number}`, `the line is longer than ${error.maxLineBytes} bytes (the limit of one line)`);
    throw error;
  }
}
