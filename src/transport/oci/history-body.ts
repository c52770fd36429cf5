/** The Tag History answer's body, written directly as JSON text. */
import { cachedDerivation } from "../../store/cached-reads.js";

const DAY_MS = 86_400_000;
/** The `YYYY-MM-DDT` prefix of the last day formatted, which consecutive records mostly share. */
let cachedDay = NaN;
let cachedPrefix = "";

const pad2 = (n: number) => (n < 10 ? `0${n}` : `${n}`);
const pad3 = (n: number) => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);

/**
 * `new Date(ms).toISOString()`, the same text for every valid time, without a Date per call: the
 * date part is computed once per UTC day, the time of day by arithmetic.
 */
export function isoTime(ms: number): string {
  const day = Math.floor(ms / DAY_MS);
  if (day !== cachedDay) {
    cachedPrefix = new Date(day * DAY_MS).toISOString().slice(0, -"00:00:00.000Z".length);
    cachedDay = day;
  }
  let rest = ms - day * DAY_MS;
  const millis = rest % 1000;
  rest = (rest - millis) / 1000;
  const seconds = rest % 60;
  rest = (rest - seconds) / 60;
  const minutes = rest % 60;
  const hours = (rest - minutes) / 60;
  return `${cachedPrefix}${pad2(hours)}:${pad2(minutes)}:${pad2(seconds)}.${pad3(millis)}Z`;
}

/**
 * `JSON.stringify({ history: [{ updateTimestamp, digest }, ...] })` for the records, oldest
 * first, with each time as `isoTime` writes it.
 */
export function historyJson(records: ReadonlyArray<{ update_time: number; digest: string }>): string {
  const parts = new Array<string>(records.length);
  for (let i = 0; i < records.length; i++) {
    const r = records[i];
    parts[i] = `{"updateTimestamp":"${isoTime(r.update_time)}","digest":${JSON.stringify(r.digest)}}`;
  }
  return `{"history":[${parts.join(",")}]}`;
}

/**
 * `historyJson(records)` as UTF-8 bytes, cached with the store's cached result the records were read
 * from (`cachedDerivation`): while the database has not changed, the same read answers the same
 * bytes without formatting 1,000 records again.
 */
export function historyBody(records: ReadonlyArray<{ update_time: number; digest: string }>): Buffer {
  return cachedDerivation(records, "tag history body", () => Buffer.from(historyJson(records), "utf8"));
}
