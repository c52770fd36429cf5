/**
 * google.api.http path templates: parsing once, matching per request.
 *
 * Grammar (google/api/http.proto):
 *   Template = "/" Segments [ Verb ] ;
 *   Segments = Segment { "/" Segment } ;
 *   Segment  = "*" | "**" | LITERAL | Variable ;
 *   Variable = "{" FieldPath [ "=" Segments ] "}" ;
 *   FieldPath = IDENT { "." IDENT } ;
 *   Verb     = ":" LITERAL ;
 *
 * Contracts:
 * - `*` matches exactly one non-empty segment; `**` matches one or more non-empty segments.
 *   A template holds at most one `**` (anywhere), so a match is unique when it exists.
 * - `{field}` is `{field=*}`. Literals compare with the raw (still encoded) path segment.
 * - Matching splits the raw path on `/` only, so a `%2F` never separates segments. A capture
 *   is the raw text it covers (a multi-segment one keeps the `/` between its segments);
 *   `decodeCapture` percent-decodes it afterwards, `%2F` included (see decisions.md).
 * - A template with a verb matches only a path whose last segment ends with `:<verb>`.
 */

type SegmentPattern = { kind: "literal"; value: string } | { kind: "star" } | { kind: "doubleStar" };

/** One `{field.path=...}` of a template, over template segments [start, end). */
export interface TemplateVariable {
  /** Field names as written in the template (proto names), e.g. ["group", "uid"]. */
  readonly fieldPath: readonly string[];
  /** `fieldPath` joined with `.`: its key in PathBindings. */
  readonly key: string;
  readonly start: number;
  readonly end: number;
  /** Whether the capture may span several path segments (its value may hold `/`). */
  readonly multiSegment: boolean;
}

export interface PathTemplate {
  /** The template as written. */
  readonly source: string;
  readonly segments: readonly SegmentPattern[];
  readonly variables: readonly TemplateVariable[];
  readonly verb: string | undefined;
  /** `:<verb>`, the suffix a matching path's last segment ends with; "" for no verb. */
  readonly verbSuffix: string;
  /** Index of the `**` segment, or -1. */
  readonly doubleStarIndex: number;
  readonly literalCount: number;
}

/** A capture: dotted field path (as in the template) -> raw (still percent-encoded) value. */
export type PathBindings = Map<string, string>;

export class PathTemplateSyntaxError extends Error {
  constructor(template: string, reason: string) {
    super(`invalid path template "${template}": ${reason}`);
    this.name = "PathTemplateSyntaxError";
  }
}

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Parses a template; throws PathTemplateSyntaxError on any grammar violation. */
export function parsePathTemplate(source: string): PathTemplate {
  const fail = (reason: string): never => {
    throw new PathTemplateSyntaxError(source, reason);
  };
  if (!source.startsWith("/")) fail("must start with /");

  const segments: SegmentPattern[] = [];
  const variables: TemplateVariable[] = [];
  let verb: string | undefined;
  let pos = 1;

  const readLiteral = (): string => {
    const start = pos;
    while (pos < source.length && !"/{}:=*".includes(source[pos])) pos++;
    if (pos === start) fail(`empty or unexpected segment at offset ${start}`);
    return source.slice(start, pos);
  };

  const readSegment = (insideVariable: boolean): void => {
    if (source.startsWith("**", pos)) {
      segments.push({ kind: "doubleStar" });
      pos += 2;
    } else if (source[pos] === "*") {
      segments.push({ kind: "star" });
      pos += 1;
    } else if (source[pos] === "{") {
      if (insideVariable) fail("nested variable");
      readVariable();
    } else {
      segments.push({ kind: "literal", value: readLiteral() });
    }
  };

  const readVariable = (): void => {
    pos += 1; // "{"
    const close = source.indexOf("}", pos);
    if (close < 0) fail("unclosed {");
    const eq = source.indexOf("=", pos);
    const nameEnd = eq >= 0 && eq < close ? eq : close;
    const fieldPath = source.slice(pos, nameEnd).split(".");
    if (!fieldPath.every((p) => IDENT.test(p))) fail(`bad field path "${source.slice(pos, nameEnd)}"`);
    const start = segments.length;
    if (nameEnd === close) {
      segments.push({ kind: "star" });
      pos = close;
    } else {
      pos = eq + 1;
      readSegment(true);
      while (source[pos] === "/") {
        pos += 1;
        readSegment(true);
      }
      if (source[pos] !== "}") fail(`expected } at offset ${pos}`);
    }
    pos += 1; // "}"
    const end = segments.length;
    const multiSegment = end - start > 1 || segments.slice(start, end).some((s) => s.kind === "doubleStar");
    variables.push({ fieldPath, key: fieldPath.join("."), start, end, multiSegment });
  };

  readSegment(false);
  while (pos < source.length) {
    const c = source[pos];
    if (c === "/") {
      pos += 1;
      readSegment(false);
    } else if (c === ":") {
      pos += 1;
      verb = readLiteral();
      if (pos !== source.length) fail("verb must end the template");
    } else {
      fail(`unexpected "${c}" at offset ${pos}`);
    }
  }

  const doubleStars = segments.filter((s) => s.kind === "doubleStar").length;
  if (doubleStars > 1) fail("more than one **");
  const seen = new Set<string>();
  for (const v of variables) {
    const key = v.fieldPath.join(".");
    if (seen.has(key)) fail(`field ${key} bound twice`);
    seen.add(key);
  }
  return {
    source,
    segments,
    variables,
    verb,
    verbSuffix: verb === undefined ? "" : `:${verb}`,
    doubleStarIndex: segments.findIndex((s) => s.kind === "doubleStar"),
    literalCount: segments.filter((s) => s.kind === "literal").length,
  };
}

/**
 * Splits a request path (no query string) into raw segments. Returns undefined for a path
 * that does not start with `/`.
 */
export function splitPath(path: string): string[] | undefined {
  if (!path.startsWith("/")) return undefined;
  return path.slice(1).split("/");
}

/**
 * Matches raw path segments (from splitPath) against a template. Returns the raw captures
 * (`decodeCapture` decodes each), or undefined when the path does not match. Called for every
 * candidate route of a request: a mismatch allocates nothing.
 */
export function matchPathTemplate(template: PathTemplate, rawSegments: readonly string[]): PathBindings | undefined {
  const n = rawSegments.length;
  const m = template.segments.length;
  const d = template.doubleStarIndex;
  if (d < 0 ? n !== m : n < m) return undefined;
  // The last segment without the verb, which only it may carry.
  let last = rawSegments[n - 1];
  if (template.verbSuffix !== "") {
    if (!last.endsWith(template.verbSuffix)) return undefined;
    last = last.slice(0, last.length - template.verbSuffix.length);
  }
  const extra = n - m; // segments absorbed by `**` beyond its first one

  for (let i = 0; i < m; i++) {
    const from = firstCovered(i, d, extra);
    const to = pastCovered(i, d, extra);
    const seg = template.segments[i];
    if (seg.kind === "literal") {
      if ((from === n - 1 ? last : rawSegments[from]) !== seg.value) return undefined;
    } else {
      for (let j = from; j < to; j++) if ((j === n - 1 ? last : rawSegments[j]) === "") return undefined;
    }
  }

  const bindings: PathBindings = new Map();
  for (const v of template.variables) {
    const from = firstCovered(v.start, d, extra);
    const to = pastCovered(v.end - 1, d, extra);
    let value = from === n - 1 ? last : rawSegments[from];
    for (let j = from + 1; j < to; j++) value += "/" + (j === n - 1 ? last : rawSegments[j]);
    bindings.set(v.key, value);
  }
  return bindings;
}

/**
 * The path segments template segment `i` covers are [firstCovered, pastCovered): one each, but
 * 1 + `extra` for the `**` at `d` (-1 for none), and those after it shifted by `extra`.
 */
function firstCovered(i: number, d: number, extra: number): number {
  return d >= 0 && i > d ? i + extra : i;
}

function pastCovered(i: number, d: number, extra: number): number {
  return d >= 0 && i >= d ? i + 1 + extra : i + 1;
}

/**
 * Orders two templates that both match a path: negative when `a` is more specific.
 * A verb beats no verb, then more literal segments win, then no `**` beats `**`.
 */
export function compareSpecificity(a: PathTemplate, b: PathTemplate): number {
  const verb = Number(b.verb !== undefined) - Number(a.verb !== undefined);
  if (verb !== 0) return verb;
  if (a.literalCount !== b.literalCount) return b.literalCount - a.literalCount;
  return Number(a.doubleStarIndex >= 0) - Number(b.doubleStarIndex >= 0);
}

/** A capture whose percent-encoding is malformed (`%zz`, a cut `%4`, bytes that are not UTF-8). */
export class MalformedEscapeError extends Error {
  constructor(readonly raw: string) {
    super(`malformed percent-encoding in "${raw}"`);
    this.name = "MalformedEscapeError";
  }
}

/**
 * The value of a raw capture: every `%XX` decoded, `%2F` to `/` in a single-segment capture
 * and in a multi-segment one alike (grpc-gateway decodes a single segment so; a `**` value
 * decoded whole is what clients that encode a UIDP's `/` mean). Throws MalformedEscapeError.
 */
export function decodeCapture(raw: string): string {
  if (!raw.includes("%")) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new MalformedEscapeError(raw);
  }
}
