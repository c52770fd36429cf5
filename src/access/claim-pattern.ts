import { RE2JS } from "re2js";

/**
 * The patterns of an identity's claim match (`issuerPattern`, `subjectPattern`, `audiencePattern`,
 * `claimPatterns`): RE2 syntax, run by a linear-time engine (re2js), never by the backtracking
 * JavaScript RegExp. Matching takes time proportional to the value's length times the pattern's
 * program size, both capped here, so no pattern and no value can stall the server.
 */

/** Largest compiled program accepted (RE2 instructions); real patterns use tens. */
export const MAX_PATTERN_INSTRUCTIONS = 1000;
/** Values longer than this (characters) never match a pattern. */
export const MAX_MATCHED_VALUE_LENGTH = 4096;

type Compiled = { re: RE2JS } | { problem: string };

function compile(pattern: string): Compiled {
  let re: RE2JS;
  try {
    re = RE2JS.compile(pattern);
  } catch (error) {
    return { problem: `must be a valid RE2 regular expression (${(error as Error).message})` };
  }
  if (re.re2().prog.numInst() > MAX_PATTERN_INSTRUCTIONS) {
    return { problem: `is too complex (its program exceeds ${MAX_PATTERN_INSTRUCTIONS} instructions; use smaller repetition counts)` };
  }
  return { re };
}

const cache = new Map<string, Compiled>();

function compiled(pattern: string): Compiled {
  let entry = cache.get(pattern);
  if (entry === undefined) {
    entry = compile(pattern);
    if (cache.size >= 1000) cache.delete(cache.keys().next().value!);
    cache.set(pattern, entry);
  }
  return entry;
}

/** Why `pattern` is not accepted (for a field violation), or undefined when it is. */
export function patternProblem(pattern: string): string | undefined {
  const entry = compiled(pattern);
  return "problem" in entry ? entry.problem : undefined;
}

/**
 * Whether `pattern` matches the WHOLE of `value`. A pattern that is not accepted (e.g. one stored
 * before these rules) matches nothing, nor does a value over MAX_MATCHED_VALUE_LENGTH.
 */
export function matchesWhole(pattern: string, value: string): boolean {
  if (value.length > MAX_MATCHED_VALUE_LENGTH) return false;
  const entry = compiled(pattern);
  return "re" in entry && entry.re.testExact(value);
}
