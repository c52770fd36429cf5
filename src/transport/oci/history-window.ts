import { fail } from "./registry-errors.js";

/**
 * The `start`/`end` window of a Tag History request (spec 4.5: ISO 8601 timestamps), in
 * ISO 8601 extended format:
 * - a date `YYYY-MM-DD`, meaning its midnight UTC;
 * - a date-time `YYYY-MM-DDThh:mm[:ss[.fraction]]` (`,` also marks the fraction; `t` and `z`
 *   in either case) with `Z` or a numeric offset `±hh:mm`, `±hhmm` or `±hh`.
 * A space before an offset is read as `+` (an unencoded `+` in a query string). A date-time
 * without a zone is refused, as its instant would be a guess.
 */
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?([Zz]|[+-]\d{2}(?::?\d{2})?)$/;

/** How an invalid bound is explained. */
export const TIMESTAMP_RULE =
  "an ISO 8601 date (2026-01-02, its midnight UTC) or date-time with Z or an offset (2026-01-02T03:04:05Z, 2026-01-02T03:04:05.678+02:00)";

/**
 * Parses a window bound to epoch ms, or undefined when the text is not one. A fraction
 * finer than the millisecond rounds up for a start bound and down for an end bound, so
 * both stay inclusive of exactly what they name.
 */
export function parseTimestamp(text: string, bound: "start" | "end"): number | undefined {
  const date = DATE.exec(text);
  const m = date ?? DATE_TIME.exec(text.replace(/ (\d{2}(?::?\d{2})?)$/, "+$1"));
  if (!m) return undefined;
  const [year, month, day] = m.slice(1, 4).map(Number);
  const [hour, minute, second] = date ? [0, 0, 0] : m.slice(4, 7).map((v) => Number(v ?? 0));
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined;
  const at = new Date(0);
  at.setUTCFullYear(year, month - 1, day); // not Date.UTC, which reads years below 100 as 19xx
  at.setUTCHours(hour, minute, second);
  if (at.getUTCDate() !== day) return undefined;
  const base = at.getTime();
  let offsetMinutes = 0;
  const zone = date ? "Z" : m[8];
  if (zone !== "Z" && zone !== "z") {
    const digits = zone.slice(1).replace(":", "");
    const oh = Number(digits.slice(0, 2));
    const om = Number(digits.slice(2) || "0");
    if (oh > 23 || om > 59) return undefined;
    offsetMinutes = (zone[0] === "-" ? -1 : 1) * (oh * 60 + om);
  }
  const nanos = date ? 0 : Number((m[7] ?? "").padEnd(9, "0"));
  const millis = bound === "start" ? Math.ceil(nanos / 1e6) : Math.floor(nanos / 1e6);
  return base - offsetMinutes * 60_000 + millis;
}

/** The window of `query`; throws 400 INVALID_ARGUMENT naming the parameter (bad or repeated bound, start after end). */
export function parseWindow(query: URLSearchParams): { start?: number; end?: number } {
  const window: { start?: number; end?: number } = {};
  for (const bound of ["start", "end"] as const) {
    const values = query.getAll(bound);
    if (values.length > 1) fail(400, "INVALID_ARGUMENT", `${bound} is given more than once`, { [bound]: values });
    if (values.length === 0) continue;
    const time = parseTimestamp(values[0], bound);
    if (time === undefined) fail(400, "INVALID_ARGUMENT", `${bound} must be ${TIMESTAMP_RULE}`, { [bound]: values[0].slice(0, 64) });
    window[bound] = time;
  }
  if (window.start !== undefined && window.end !== undefined && window.start > window.end) {
    fail(400, "INVALID_ARGUMENT", "start is after end", { start: query.get("start"), end: query.get("end") });
  }
  return window;
}
