// osv.dev's index of an ecosystem's folder: `modified_id.csv`, one `<RFC 3339 modified>,<id>` line
// per record, newest first, beside the records (`<id>.json`).

import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import { OsvFeedError } from "./errors.js";
import { compareOsvTimes, isOsvTime } from "./time.js";

/** One line of `modified_id.csv`. */
export interface ModifiedId {
  readonly modified: string;
  readonly id: string;
}

/** An id that is safe as a URL path segment and a file name: OSV ids are `PREFIX-...` of these characters. */
const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9._:+-]{0,254}$/;

/**
 * The lines of the `modified_id.csv` file at `path` whose `modified` is later than `after` (all
 * when undefined), in file order; reading stops at the first line that is not later, since the
 * file lists the newest first. Empty lines are skipped. Throws OsvFeedError (naming `source` and
 * the line) for a line that is not `<RFC 3339>,<id>` or names an id unsafe as a file name.
 */
export async function* readModifiedIds(path: string, source: string, after?: string): AsyncGenerator<ModifiedId> {
  const lines = createInterface({ input: createReadStream(path), crlfDelay: Infinity });
  let number = 0;
  try {
    for await (const raw of lines) {
      number++;
      const line = raw.trim();
      if (line === "") continue;
      const comma = line.indexOf(",");
      const modified = line.slice(0, comma);
      const id = line.slice(comma + 1);
      if (comma < 0 || !isOsvTime(modified)) throw new OsvFeedError(`${source}:${number}`, "not a `<RFC 3339 modified>,<id>` line");
      if (!SAFE_ID.test(id)) throw new OsvFeedError(`${source}:${number}`, `${JSON.stringify(id.slice(0, 80))} is not an OSV id`);
      if (after !== undefined && compareOsvTimes(modified, after) <= 0) return;
      yield { modified, id };
    }
  } finally {
    lines.close();
  }
}
