// Maven versions, ordered like Maven's ComparableVersion (maven-artifact, org.apache.maven.artifact
// .versioning.ComparableVersion, as on Maven's master branch; "Version Order Specification" in the
// POM reference). A version is a list of items split on `.`, `-` and digit/letter transitions:
// numbers compare numerically and sort after every qualifier; the known qualifiers sort
// alpha = a < beta = b < milestone = m < rc = cr < snapshot < "" = ga = final = release < sp,
// unknown qualifiers after them in lexical order; `-` opens a sub-list (so `1-1 < 1.1`), and
// trailing null items (0, "", empty lists) are dropped (`1 = 1.0 = 1-0`). Case-insensitive.
import { compareBig, type VersionOrdering } from "./ordering.js";

type Item = NumberItem | StringItem | CombinationItem | ListItem;
interface NumberItem {
  kind: "number";
  value: bigint;
}
interface StringItem {
  kind: "string";
  value: string;
}
/** A qualifier directly followed by a number (`rc1`, `alpha-2`). */
interface CombinationItem {
  kind: "combination";
  stringPart: StringItem;
  digitPart: NumberItem;
}
interface ListItem {
  kind: "list";
  items: Item[];
}

/** The parsed form of a Maven version: its top-level item list. */
export type MavenVersion = ListItem;

const MAX_VERSION_LENGTH = 256;
const QUALIFIERS = ["alpha", "beta", "milestone", "rc", "snapshot", "", "sp"];
const RELEASE_QUALIFIERS = new Set(["ga", "final", "release"]);
const RELEASE_VERSION_INDEX = String(QUALIFIERS.indexOf(""));

function stringItem(value: string, followedByDigit: boolean): StringItem {
  let v = value;
  if (followedByDigit && v.length === 1) {
    if (v === "a") v = "alpha";
    else if (v === "b") v = "beta";
    else if (v === "m") v = "milestone";
  }
  return { kind: "string", value: v === "cr" ? "rc" : v };
}

function numberItem(digits: string): NumberItem {
  return { kind: "number", value: BigInt(digits === "" ? "0" : digits) };
}

function combinationItem(value: string): CombinationItem {
  const firstDigit = value.search(/[0-9]/);
  const index = firstDigit < 0 ? 0 : firstDigit;
  return { kind: "combination", stringPart: stringItem(value.slice(0, index), true), digitPart: numberItem(value.slice(index)) };
}

function parseItem(isCombination: boolean, isDigit: boolean, buf: string): Item {
  if (isCombination) return combinationItem(buf.replaceAll("-", ""));
  if (isDigit) return numberItem(buf);
  return stringItem(buf, false);
}

/** The string that sorts a qualifier among the others (ComparableVersion.comparableQualifier). */
function comparableQualifier(qualifier: string): string {
  if (RELEASE_QUALIFIERS.has(qualifier)) return RELEASE_VERSION_INDEX;
  const i = QUALIFIERS.indexOf(qualifier);
  return i === -1 ? `${QUALIFIERS.length}-${qualifier}` : String(i);
}

const cmpStrings = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function isNull(item: Item): boolean {
  switch (item.kind) {
    case "number":
      return item.value === 0n;
    case "string":
      return item.value === "";
    case "combination":
      return false;
    case "list":
      return item.items.length === 0;
  }
}

/** Item.compareTo: `other` undefined stands for Java's null (a missing item, the padding). */
function compareItem(item: Item, other: Item | undefined): number {
  switch (item.kind) {
    case "number":
      if (other === undefined) return item.value === 0n ? 0 : 1; // 1.0 == 1, 1.1 > 1
      return other.kind === "number" ? compareBig(item.value, other.value) : 1;
    case "string":
      if (other === undefined) return cmpStrings(comparableQualifier(item.value), RELEASE_VERSION_INDEX);
      switch (other.kind) {
        case "number":
          return -1;
        case "string":
          return cmpStrings(comparableQualifier(item.value), comparableQualifier(other.value));
        case "combination": {
          const result = compareItem(item, other.stringPart);
          if (result !== 0) return result;
          return compareItem(item, undefined) === 0 ? -compareItem(other.digitPart, undefined) : -1;
        }
        case "list":
          return -compareItem(other, item);
      }
      break;
    case "combination":
      if (other === undefined) {
        const result = compareItem(item.stringPart, undefined);
        return result !== 0 ? result : compareItem(item.digitPart, undefined);
      }
      switch (other.kind) {
        case "number":
          return -1;
        case "string": {
          const result = compareItem(item.stringPart, other);
          if (result !== 0) return result;
          return compareItem(item.stringPart, undefined) === 0 ? compareItem(item.digitPart, undefined) : 1;
        }
        case "list":
          return -compareItem(other, item);
        case "combination": {
          const result = compareItem(item.stringPart, other.stringPart);
          return result !== 0 ? result : compareItem(item.digitPart, other.digitPart);
        }
      }
      break;
    case "list":
      return compareList(item, other);
  }
  return 0;
}

function compareList(list: ListItem, other: Item | undefined): number {
  const items = list.items;
  if (other === undefined) {
    for (const i of items) {
      const result = compareItem(i, undefined);
      if (result !== 0) return result;
    }
    return 0;
  }
  switch (other.kind) {
    case "number":
      return -1; // 1-1 < 1.0.x
    case "string":
    case "combination": {
      let result = items.length === 0 ? -compareItem(other, undefined) : compareItem(items[0], other);
      for (let i = 1; result === 0 && i < items.length; i++) result = compareItem(items[i], undefined);
      return result;
    }
    case "list": {
      const length = Math.max(items.length, other.items.length);
      for (let i = 0; i < length; i++) {
        const l = items[i];
        const r = other.items[i];
        const result = l === undefined ? (r === undefined ? 0 : -compareItem(r, undefined)) : compareItem(l, r);
        if (result !== 0) return result;
      }
      return 0;
    }
  }
}

/** ListItem.normalize: drops null items that end the list or precede a qualifier. */
function normalize(list: ListItem): void {
  const items = list.items;
  for (let i = items.length - 1; i >= 0; i--) {
    if (!isNull(items[i])) continue;
    const next = items[i + 1];
    if (next === undefined || next.kind === "string") {
      items.splice(i, 1);
    } else if (next.kind === "list") {
      const first = next.items[0];
      if (first !== undefined && (first.kind === "combination" || first.kind === "string")) items.splice(i, 1);
    }
  }
  if (items.length === 1 && items[0].kind === "list") {
    // Removing a zero prefix must not leave an extra qualifier nesting level.
    list.items = items[0].items;
  }
}

const isAsciiDigit = (c: string | undefined): boolean => c !== undefined && c >= "0" && c <= "9";

/** ComparableVersion.parseVersion over an already validated, lower-cased ASCII string. */
function parseItems(version: string): ListItem {
  const root: ListItem = { kind: "list", items: [] };
  let list = root;
  const stack: ListItem[] = [root];
  const openList = (): void => {
    const child: ListItem = { kind: "list", items: [] };
    list.items.push(child);
    list = child;
    stack.push(child);
  };
  let isDigit = false;
  let isCombination = false;
  let startIndex = 0;

  for (let i = 0; i < version.length; i++) {
    const c = version[i];
    if (c === ".") {
      list.items.push(i === startIndex ? numberItem("0") : parseItem(isCombination, isDigit, version.slice(startIndex, i)));
      isCombination = false;
      startIndex = i + 1;
    } else if (c === "-") {
      if (i === startIndex) {
        list.items.push(numberItem("0"));
      } else {
        // X-1 is read as X1
        if (!isDigit && i !== version.length - 1 && isAsciiDigit(version[i + 1])) {
          isCombination = true;
          continue;
        }
        list.items.push(parseItem(isCombination, isDigit, version.slice(startIndex, i)));
      }
      startIndex = i + 1;
      if (list.items.length > 0) openList();
      isCombination = false;
    } else if (isAsciiDigit(c)) {
      if (!isDigit && i > startIndex) {
        // X1
        isCombination = true;
        if (list.items.length > 0) openList();
      }
      isDigit = true;
    } else {
      if (isDigit && i > startIndex) {
        list.items.push(parseItem(isCombination, true, version.slice(startIndex, i)));
        startIndex = i;
        openList();
        isCombination = false;
      }
      isDigit = false;
    }
  }

  if (version.length > startIndex) {
    // 1.0.0.X1 < 1.0.0-X2: a trailing .X is read as -X for any qualifier X
    if (!isDigit && list.items.length > 0) openList();
    list.items.push(parseItem(isCombination, isDigit, version.slice(startIndex)));
  }

  while (stack.length > 0) normalize(stack.pop()!);
  return root;
}

/**
 * Parses a Maven version. ComparableVersion accepts any string; we refuse the empty string,
 * strings over 256 characters (Maven's own limit) and anything outside printable ASCII without
 * blanks, so that the ordering never depends on Java's Unicode tables.
 */
export function parseMavenVersion(version: string): MavenVersion | undefined {
  if (version.length === 0 || version.length > MAX_VERSION_LENGTH || !/^[\x21-\x7e]+$/.test(version)) return undefined;
  try {
    return parseItems(version.toLowerCase());
  } catch {
    return undefined; // where ComparableVersion itself would throw
  }
}

export function compareMavenVersions(a: MavenVersion, b: MavenVersion): number {
  return compareList(a, b);
}

export const mavenOrdering: VersionOrdering<MavenVersion> = {
  name: "Maven",
  parse: parseMavenVersion,
  compare: compareMavenVersions,
};
