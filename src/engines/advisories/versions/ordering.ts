/**
 * A total preorder over one ecosystem's version strings.
 *
 * `parse` returns undefined for a string that is not a valid version in that ecosystem (it never
 * throws); `compare` takes two parsed versions and returns a negative number, zero or a positive
 * number. Two versions comparing equal (`1.0` and `1.0.0` in PyPI) are the same version.
 */
export interface VersionOrdering<T> {
  readonly name: string;
  parse(version: string): T | undefined;
  compare(a: T, b: T): number;
}

/** Compares two strings under an ordering; undefined when either is not a valid version. */
export function compareStrings<T>(ordering: VersionOrdering<T>, a: string, b: string): number | undefined {
  const pa = ordering.parse(a);
  const pb = ordering.parse(b);
  if (pa === undefined || pb === undefined) return undefined;
  return ordering.compare(pa, pb);
}

/** -1, 0 or 1 for two bigints. */
export function compareBig(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
