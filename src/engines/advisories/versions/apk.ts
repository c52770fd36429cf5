// Alpine, Wolfi and Chainguard package versions, compared the way apk-tools does (src/version.c:
// `token_first`, `token_next`, `token_cmp`, `apk_version_compare`). The grammar is
// `digit{.digit}...{letter}{_suffix{number}}...{~hash}{-rN}`: numbers compare numerically, except
// that a component after a dot with a leading zero compares as a string (`1.01 < 1.1`, as Gentoo
// does); a letter after the numbers is greater than none; the pre-release suffixes
// `_alpha < _beta < _pre < _rc` sort before no suffix and the post-release ones
// `_cvs < _svn < _git < _hg < _p` after it; a `~hash` compares as a string; `-rN` revisions last.
import { compareBig, type VersionOrdering } from "./ordering.js";

/** Token kinds in grammar order; the order is part of the comparison. */
enum Token {
  InitialDigit,
  Digit,
  Letter,
  Suffix,
  SuffixNo,
  CommitHash,
  RevisionNo,
  End,
  Invalid,
}

/** Suffix ranks; None (no suffix) is the pivot between pre- and post-release suffixes. */
const SUFFIXES = new Map([
  ["alpha", 1],
  ["beta", 2],
  ["pre", 3],
  ["rc", 4],
  ["cvs", 6],
  ["svn", 7],
  ["git", 8],
  ["hg", 9],
  ["p", 10],
]);
const SUFFIX_NONE = 5;

interface ApkToken {
  token: Token;
  /** The token's text: the digits, the letter, the suffix name or the hash. */
  value: string;
  number: bigint;
  suffix: number;
}

/** A valid apk version: its tokens, the last one End. */
export type ApkVersion = readonly ApkToken[];

const DIGITS = /^[0-9]*/;
const SUFFIX_NAME = /^[a-z]*/;
const HEX = /^[0-9a-fA-F]*/;

function tokenize(version: string): ApkToken[] {
  const tokens: ApkToken[] = [];
  let rest = version;

  const take = (pattern: RegExp): string => {
    const match = pattern.exec(rest)![0];
    rest = rest.slice(match.length);
    return match;
  };
  const digits = (token: Token): ApkToken => {
    const value = take(DIGITS);
    return value === "" ? invalid() : { token, value, number: BigInt(value), suffix: 0 };
  };
  const invalid = (): ApkToken => ({ token: Token.Invalid, value: "", number: 0n, suffix: 0 });

  /** token_next: the token after `prev`, judged by the first character of the rest. */
  const next = (prev: Token): ApkToken => {
    if (rest === "") return { token: Token.End, value: "", number: 0n, suffix: 0 };
    const c = rest[0];
    if (c >= "a" && c <= "z") {
      if (prev > Token.Digit) return invalid();
      rest = rest.slice(1);
      return { token: Token.Letter, value: c, number: 0n, suffix: 0 };
    }
    if (c === "." || (c >= "0" && c <= "9")) {
      if (c === ".") {
        if (prev > Token.Digit) return invalid();
        rest = rest.slice(1);
      }
      if (prev === Token.InitialDigit || prev === Token.Digit) return digits(Token.Digit);
      if (prev === Token.Suffix) return digits(Token.SuffixNo);
      return invalid();
    }
    if (c === "_") {
      if (prev > Token.SuffixNo) return invalid();
      rest = rest.slice(1);
      const value = take(SUFFIX_NAME);
      const suffix = SUFFIXES.get(value);
      return suffix === undefined ? invalid() : { token: Token.Suffix, value, number: 0n, suffix };
    }
    if (c === "~") {
      if (prev >= Token.CommitHash) return invalid();
      rest = rest.slice(1);
      const value = take(HEX);
      return value === "" ? invalid() : { token: Token.CommitHash, value, number: 0n, suffix: 0 };
    }
    if (c === "-") {
      if (prev >= Token.RevisionNo || !rest.startsWith("-r")) return invalid();
      rest = rest.slice(2);
      return digits(Token.RevisionNo);
    }
    return invalid();
  };

  let current = digits(Token.InitialDigit);
  tokens.push(current);
  while (current.token < Token.End) {
    current = next(current.token);
    tokens.push(current);
  }
  return tokens;
}

/** Parses an apk version; undefined unless apk-tools' `apk_version_validate` accepts it. */
export function parseApkVersion(version: string): ApkVersion | undefined {
  const tokens = tokenize(version);
  return tokens[tokens.length - 1].token === Token.End ? tokens : undefined;
}

/** apk_blob_sort: bytewise, then the shorter first. */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** token_cmp, for two tokens of the same kind. */
function compareToken(a: ApkToken, b: ApkToken): number {
  switch (a.token) {
    case Token.Digit:
      if (a.value.startsWith("0") || b.value.startsWith("0")) return compareText(a.value, b.value);
      return compareBig(a.number, b.number);
    case Token.InitialDigit:
    case Token.SuffixNo:
    case Token.RevisionNo:
      return compareBig(a.number, b.number);
    case Token.Letter:
      return compareText(a.value, b.value);
    case Token.Suffix:
      return Math.sign(a.suffix - b.suffix);
    default:
      return compareText(a.value, b.value);
  }
}

/** apk_version_compare (not fuzzy). */
export function compareApkVersions(a: ApkVersion, b: ApkVersion): number {
  let i = 0;
  while (a[i].token === b[i].token && a[i].token < Token.End) {
    const r = compareToken(a[i], b[i]);
    if (r !== 0) return r;
    i++;
  }
  const ta = a[i];
  const tb = b[i];
  if (ta.token === tb.token) return 0;
  // Equal so far: the longer version is greater unless it goes on with a pre-release suffix.
  if (ta.token === Token.Suffix && ta.suffix < SUFFIX_NONE) return -1;
  if (tb.token === Token.Suffix && tb.suffix < SUFFIX_NONE) return 1;
  return ta.token > tb.token ? -1 : 1;
}

export const apkOrdering: VersionOrdering<ApkVersion> = {
  name: "apk",
  parse: parseApkVersion,
  compare: compareApkVersions,
};
