// Alpine (and Wolfi, Chainguard) package versions, compared the way apk-tools 2 does
// (src/version.c: `get_token`, `next_token`, `apk_version_compare_blob`). The Gentoo-style grammar
// is `digit{.digit}[letter]{_suffix[number]}[-r#]`: numbers compare numerically (a component after
// a dot with leading zeros sorts before one without), a letter after the numbers is greater than
// none, the pre-release suffixes `_alpha < _beta < _pre < _rc` sort before no suffix and the
// post-release ones `_cvs < _svn < _git < _hg < _p` after it, and `-rN` revisions compare last.
import { compareBig, type VersionOrdering } from "./ordering.js";

enum Token {
  Invalid = -1,
  DigitOrZero = 0,
  Digit = 1,
  Letter = 2,
  Suffix = 3,
  SuffixNo = 4,
  RevisionNo = 5,
  End = 6,
}

const PRE_SUFFIXES = ["alpha", "beta", "pre", "rc"];
const POST_SUFFIXES = ["cvs", "svn", "git", "hg", "p"];

/** A version as apk-tools reads it: token i has type `types[i]` and value `values[i]`. */
export interface ApkVersion {
  readonly types: Token[];
  readonly values: bigint[];
}

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= "0" && c <= "9";
const isLower = (c: string | undefined): boolean => c !== undefined && c >= "a" && c <= "z";

/** Splits a version into apk-tools' tokens; the last type is End or Invalid. */
function tokenize(version: string): ApkVersion {
  const types: Token[] = [];
  const values: bigint[] = [];
  let pos = 0;
  let type: Token = Token.Digit as Token;

  const nextToken = (): void => {
    let next = Token.Invalid;
    const c = version[pos];
    if (pos >= version.length) next = Token.End;
    else if ((type === Token.Digit || type === Token.DigitOrZero) && isLower(c)) next = Token.Letter;
    else if (type === Token.Letter && isDigit(c)) next = Token.Digit;
    else if (type === Token.Suffix && isDigit(c)) next = Token.SuffixNo;
    else {
      if (c === ".") next = Token.DigitOrZero;
      else if (c === "_") next = Token.Suffix;
      else if (c === "-") {
        if (version[pos + 1] === "r") {
          next = Token.RevisionNo;
          pos++;
        }
      }
      pos++;
    }
    if (
      next < type &&
      !(
        (next === Token.DigitOrZero && type === Token.Digit) ||
        (next === Token.Suffix && type === Token.SuffixNo) ||
        (next === Token.Digit && type === Token.Letter)
      )
    ) {
      next = Token.Invalid;
    }
    type = next;
  };

  // One round of apk-tools' get_token: the value of the current token, then the next type.
  const getToken = (): bigint => {
    let value = 0n;
    let length = 0;
    let nextType = Token.Invalid;
    const rest = version.slice(pos);
    if (type === Token.DigitOrZero && rest[0] === "0") {
      // a component after a dot that starts with zeros: minus the number of zeros, then the rest
      while (rest[length] === "0") length++;
      nextType = Token.Digit;
      value = BigInt(-length);
    } else {
      switch (type) {
        case Token.DigitOrZero:
        case Token.Digit:
        case Token.SuffixNo:
        case Token.RevisionNo:
          while (isDigit(rest[length])) length++;
          value = length === 0 ? 0n : BigInt(rest.slice(0, length));
          break;
        case Token.Letter:
          value = BigInt(rest.charCodeAt(0));
          length = 1;
          break;
        case Token.Suffix: {
          const pre = PRE_SUFFIXES.findIndex((s) => rest.startsWith(s));
          if (pre >= 0) {
            value = BigInt(pre - PRE_SUFFIXES.length);
            length = PRE_SUFFIXES[pre].length;
            break;
          }
          const post = POST_SUFFIXES.findIndex((s) => rest.startsWith(s));
          if (post >= 0) {
            value = BigInt(post);
            length = POST_SUFFIXES[post].length;
            break;
          }
          type = Token.Invalid;
          return -1n;
        }
        default:
          type = Token.Invalid;
          return -1n;
      }
    }
    pos += length;
    if (pos >= version.length) type = Token.End;
    else if (nextType !== Token.Invalid) type = nextType;
    else nextToken();
    return value;
  };

  while (type !== Token.End && type !== Token.Invalid) {
    types.push(type);
    values.push(getToken());
  }
  types.push(type);
  values.push(0n);
  return { types, values };
}

/**
 * Parses an apk version; undefined unless apk-tools' `apk_version_validate` accepts it. We also
 * require a leading digit and refuse the empty string, which apk-tools 2 lets through.
 */
export function parseApkVersion(version: string): ApkVersion | undefined {
  if (!isDigit(version[0])) return undefined;
  const parsed = tokenize(version);
  return parsed.types[parsed.types.length - 1] === Token.End ? parsed : undefined;
}

/** apk-tools' `apk_version_compare_blob` (non-fuzzy). */
export function compareApkVersions(a: ApkVersion, b: ApkVersion): number {
  let i = 0;
  let at = a.types[0];
  let bt = b.types[0];
  let av = 0n;
  let bv = 0n;
  while (at === bt && at !== Token.End && at !== Token.Invalid && av === bv) {
    av = a.values[i];
    bv = b.values[i];
    i++;
    at = a.types[i];
    bt = b.types[i];
  }
  const byValue = compareBig(av, bv);
  if (byValue !== 0) return byValue;
  if (at === bt) return 0;
  // Equal so far: the longer version is greater unless it continues with a pre-release suffix.
  if (at === Token.Suffix && a.values[i] < 0n) return -1;
  if (bt === Token.Suffix && b.values[i] < 0n) return 1;
  if (at > bt) return -1;
  if (bt > at) return 1;
  return 0;
}

export const apkOrdering: VersionOrdering<ApkVersion> = {
  name: "apk",
  parse: parseApkVersion,
  compare: compareApkVersions,
};
