// RFC 3339 date-times as OSV records carry them (`modified`, `published`, `withdrawn`).

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** A point in time, exact to the nanosecond: seconds since the epoch (UTC) and the fraction. */
export interface OsvInstant {
  readonly epochSeconds: number;
  readonly nanos: number;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/**
 * Parses an RFC 3339 date-time (`2024-01-31T12:00:00Z`, with an optional fraction of up to nine
 * digits and `Z` or a `+hh:mm`/`-hh:mm` offset; `T` and `Z` in either case; a leap second `:60`
 * is read as the next second). Returns undefined for anything else, including impossible dates.
 */
export function parseOsvTime(text: string): OsvInstant | undefined {
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 60) return undefined;
  let offsetMinutes = 0;
  if (m[9] !== undefined) {
    const offHours = Number(m[10]);
    const offMinutes = Number(m[11]);
    if (offHours > 23 || offMinutes > 59) return undefined;
    offsetMinutes = (m[9] === "-" ? -1 : 1) * (offHours * 60 + offMinutes);
  }
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  const epochSeconds = date.getTime() / 1000 - offsetMinutes * 60;
  const nanos = m[7] === undefined ? 0 : Number(m[7].padEnd(9, "0"));
  return { epochSeconds, nanos };
}

/** Whether `text` is an RFC 3339 date-time that parseOsvTime accepts. */
export function isOsvTime(text: string): boolean {
  return parseOsvTime(text) !== undefined;
}

/**
 * Orders two OSV date-times exactly (offsets and fractions of any length taken into account):
 * negative when `a` is earlier, 0 when they are the same instant, positive when later.
 * Throws a TypeError if either is not an RFC 3339 date-time.
 */
export function compareOsvTimes(a: string, b: string): number {
  const x = parseOsvTime(a);
  const y = parseOsvTime(b);
  if (!x || !y) throw new TypeError(`not an RFC 3339 date-time: ${JSON.stringify(x ? b : a)}`);
  return compareOsvInstants(x, y);
}

/** Orders two parsed date-times as compareOsvTimes orders their texts. */
export function compareOsvInstants(x: OsvInstant, y: OsvInstant): number {
  return x.epochSeconds - y.epochSeconds || x.nanos - y.nanos;
}

/** An OSV date-time as milliseconds since the epoch (the fraction below a millisecond dropped). Throws a TypeError if it is not RFC 3339. */
export function osvTimeMillis(text: string): number {
  const t = parseOsvTime(text);
  if (!t) throw new TypeError(`not an RFC 3339 date-time: ${JSON.stringify(text)}`);
  return t.epochSeconds * 1000 + Math.floor(t.nanos / 1e6);
}
