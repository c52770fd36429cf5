// Validating parser for OSV records: strict where matching depends on a field (ids, times,
// packages, ranges and events), lenient where the schema lets databases extend it (unknown fields
// are kept, `*_specific` objects are opaque, severity and reference types are open-ended).
// The rules and bounds are listed in docs/decisions.md, "OSV import: what is accepted".

import { ecosystemBase, ecosystemSpelledAs, isOsvEcosystem } from "./ecosystems.js";
import { OsvRecordError } from "./errors.js";
import { OSV_LIMITS, type OsvRecord } from "./record.js";
import { isOsvTime } from "./time.js";

export interface ParseOsvOptions {
  /** Accept ecosystems the OSV schema does not define (default false: such a record is refused). */
  readonly allowUnknownEcosystems?: boolean;
}

type Json = Record<string, unknown>;

const ID = /^[A-Za-z0-9][A-Za-z0-9._:+-]*$/;
const TYPE_TOKEN = /^[A-Za-z0-9_]+$/;
const CONTROL = /[\u0000-\u001f\u007f]/;
const WHITESPACE_OR_CONTROL = /[\s\u0000-\u001f\u007f]/;
// SemVer 2.0.0 (https://semver.org), without a leading "v".
const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;
const RANGE_TYPES = new Set(["SEMVER", "ECOSYSTEM", "GIT"]);
const EVENT_KEYS = ["introduced", "fixed", "last_affected", "limit"] as const;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  return `a ${typeof value}`;
}

function quote(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 77)}...` : text);
}

function at(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

/** What a JSON document that is not an OSV record looks like, for the error message; undefined if it may be one. */
function foreignShape(doc: unknown): string | undefined {
  if (Array.isArray(doc)) {
    return isObject(doc[0]) && "id" in doc[0]
      ? "a JSON array of records (give one record per file)"
      : "a JSON array";
  }
  if (!isObject(doc)) return `${describe(doc)}, not an object`;
  if ("id" in doc && "modified" in doc) return undefined;
  if (doc.bomFormat === "CycloneDX") return "a CycloneDX SBOM";
  if ("spdxVersion" in doc || "SPDXID" in doc) return "an SPDX document";
  if (Array.isArray(doc.vulns)) return 'an osv.dev API response (its "vulns" hold records: give one record per file)';
  if (typeof doc.name === "string" && ("version" in doc || "dependencies" in doc || "scripts" in doc)) {
    return "a package manifest (package.json)";
  }
  if (!("id" in doc) && !("modified" in doc)) {
    const keys = Object.keys(doc).slice(0, 5).map((k) => quote(k));
    return `an object with neither "id" nor "modified"${keys.length ? ` (its keys: ${keys.join(", ")}${Object.keys(doc).length > 5 ? ", ..." : ""})` : ""}`;
  }
  return undefined;
}

class Checker {
  constructor(
    private readonly source: string,
    private readonly options: ParseOsvOptions,
  ) {}

  fail(path: string, reason: string): never {
    throw new OsvRecordError(this.source, path, reason, "invalid");
  }

  object(value: unknown, path: string): Json {
    if (!isObject(value)) this.fail(path, `must be an object, not ${describe(value)}`);
    return { ...value };
  }

  array(value: unknown, path: string, max: number): unknown[] {
    if (!Array.isArray(value)) this.fail(path, `must be an array, not ${describe(value)}`);
    if (value.length > max) this.fail(path, `has ${value.length} entries; at most ${max} are accepted`);
    return value;
  }

  /** Free text: any string up to `max` (newlines and tabs allowed). */
  text(value: unknown, path: string, max: number): string {
    if (typeof value !== "string") this.fail(path, `must be a string, not ${describe(value)}`);
    if (value.length > max) this.fail(path, `is ${value.length} characters long; at most ${max} are accepted`);
    return value;
  }

  /** A name, version or URL: non-empty, no control characters, up to `max`. */
  token(value: unknown, path: string, max: number): string {
    const text = this.text(value, path, max);
    if (text.length === 0) this.fail(path, "must not be empty");
    if (CONTROL.test(text)) this.fail(path, "must not contain control characters");
    return text;
  }

  /** An identifier of this or another database: non-empty, no whitespace or control characters. */
  identifier(value: unknown, path: string): string {
    const text = this.token(value, path, OSV_LIMITS.id);
    if (WHITESPACE_OR_CONTROL.test(text)) this.fail(path, `${quote(text)} must not contain whitespace`);
    return text;
  }

  time(value: unknown, path: string): string {
    const text = this.text(value, path, 64);
    if (!isOsvTime(text)) this.fail(path, `${quote(text)} is not an RFC 3339 date-time (like 2024-01-31T12:00:00Z)`);
    return text;
  }

  typeToken(value: unknown, path: string, max: number): string {
    const text = this.token(value, path, max);
    if (!TYPE_TOKEN.test(text)) this.fail(path, `${quote(text)} is not a type name (letters, digits and _)`);
    return text;
  }

  /** Replaces `key` of `out` by check(value), or removes it when absent or null. */
  optional(out: Json, key: string, path: string, check: (value: unknown, path: string) => unknown): void {
    const value = out[key];
    if (value === undefined || value === null) {
      delete out[key];
      return;
    }
    out[key] = check(value, at(path, key));
  }

  required(out: Json, key: string, path: string, check: (value: unknown, path: string) => unknown): void {
    const value = out[key];
    if (value === undefined || value === null) this.fail(at(path, key), "is required");
    out[key] = check(value, at(path, key));
  }

  list<T>(value: unknown, path: string, max: number, check: (item: unknown, path: string) => T): T[] {
    return this.array(value, path, max).map((item, i) => check(item, `${path}[${i}]`));
  }

  record(doc: unknown): OsvRecord {
    const foreign = foreignShape(doc);
    if (foreign) throw new OsvRecordError(this.source, "", `not an OSV record: the document is ${foreign}`, "not-osv");
    const out = this.object(doc, "");
    this.required(out, "id", "", (v, p) => {
      const id = this.token(v, p, OSV_LIMITS.id);
      if (!ID.test(id)) this.fail(p, `${quote(id)} is not an OSV id (letters, digits and . _ : + -, starting with a letter or digit)`);
      return id;
    });
    this.required(out, "modified", "", (v, p) => this.time(v, p));
    this.optional(out, "schema_version", "", (v, p) => this.token(v, p, OSV_LIMITS.schemaVersion));
    this.optional(out, "published", "", (v, p) => this.time(v, p));
    this.optional(out, "withdrawn", "", (v, p) => this.time(v, p));
    for (const key of ["aliases", "related", "upstream"]) {
      this.optional(out, key, "", (v, p) => this.list(v, p, OSV_LIMITS.idList, (item, q) => this.identifier(item, q)));
    }
    this.optional(out, "summary", "", (v, p) => this.text(v, p, OSV_LIMITS.summary));
    this.optional(out, "details", "", (v, p) => this.text(v, p, OSV_LIMITS.recordBytes));
    this.optional(out, "severity", "", (v, p) => this.severities(v, p));
    this.optional(out, "affected", "", (v, p) => this.list(v, p, OSV_LIMITS.affected, (item, q) => this.affected(item, q)));
    this.optional(out, "references", "", (v, p) => this.list(v, p, OSV_LIMITS.references, (item, q) => this.reference(item, q)));
    this.optional(out, "credits", "", (v, p) => this.list(v, p, OSV_LIMITS.credits, (item, q) => this.credit(item, q)));
    this.optional(out, "database_specific", "", (v, p) => this.object(v, p));
    return out as unknown as OsvRecord;
  }

  severities(value: unknown, path: string): unknown[] {
    return this.list(value, path, OSV_LIMITS.severity, (item, p) => {
      const out = this.object(item, p);
      this.required(out, "type", p, (v, q) => this.typeToken(v, q, OSV_LIMITS.severityType));
      this.required(out, "score", p, (v, q) => this.token(v, q, OSV_LIMITS.severityScore));
      return out;
    });
  }

  affected(value: unknown, path: string): Json {
    const out = this.object(value, path);
    this.optional(out, "package", path, (v, p) => this.package(v, p));
    this.optional(out, "severity", path, (v, p) => this.severities(v, p));
    this.optional(out, "ranges", path, (v, p) => this.list(v, p, OSV_LIMITS.ranges, (item, q) => this.range(item, q)));
    this.optional(out, "versions", path, (v, p) =>
      this.list(v, p, OSV_LIMITS.versions, (item, q) => this.token(item, q, OSV_LIMITS.version)),
    );
    this.optional(out, "ecosystem_specific", path, (v, p) => this.object(v, p));
    this.optional(out, "database_specific", path, (v, p) => this.object(v, p));
    return out;
  }

  package(value: unknown, path: string): Json {
    const out = this.object(value, path);
    this.required(out, "ecosystem", path, (v, p) => {
      const ecosystem = this.token(v, p, OSV_LIMITS.ecosystem);
      if (!this.options.allowUnknownEcosystems && !isOsvEcosystem(ecosystem)) {
        const spelled = ecosystemSpelledAs(ecosystemBase(ecosystem));
        this.fail(p, `${quote(ecosystem)} is not an OSV ecosystem${spelled ? ` (ecosystems are case-sensitive: did you mean ${quote(spelled)}?)` : ""}`);
      }
      return ecosystem;
    });
    this.required(out, "name", path, (v, p) => this.token(v, p, OSV_LIMITS.packageName));
    this.optional(out, "purl", path, (v, p) => {
      const purl = this.token(v, p, OSV_LIMITS.purl);
      if (!purl.startsWith("pkg:")) this.fail(p, `${quote(purl)} is not a package URL (pkg:type/name)`);
      return purl;
    });
    return out;
  }

  range(value: unknown, path: string): Json {
    const out = this.object(value, path);
    this.required(out, "type", path, (v, p) => {
      const type = this.text(v, p, 32);
      if (!RANGE_TYPES.has(type)) this.fail(p, `${quote(type)} is not a range type (SEMVER, ECOSYSTEM or GIT)`);
      return type;
    });
    if (out.type === "GIT") this.required(out, "repo", path, (v, p) => this.token(v, p, OSV_LIMITS.repo));
    else this.optional(out, "repo", path, (v, p) => this.token(v, p, OSV_LIMITS.repo));
    this.required(out, "events", path, (v, p) => {
      const events = this.list(v, p, OSV_LIMITS.events, (item, q) => this.event(item, q, out.type as string));
      if (events.length === 0) this.fail(p, "must have at least one event");
      if (!events.some((e) => "introduced" in e)) this.fail(p, 'must have an "introduced" event');
      if (events.some((e) => "fixed" in e) && events.some((e) => "last_affected" in e)) {
        this.fail(p, 'must not have both "fixed" and "last_affected" events (use two ranges)');
      }
      return events;
    });
    this.optional(out, "database_specific", path, (v, p) => this.object(v, p));
    return out;
  }

  event(value: unknown, path: string, rangeType: string): Json {
    const out = this.object(value, path);
    const keys = EVENT_KEYS.filter((k) => out[k] !== undefined);
    if (keys.length !== 1) this.fail(path, "an event has exactly one of introduced, fixed, last_affected, limit");
    const key = keys[0];
    const version = this.token(out[key], at(path, key), OSV_LIMITS.version);
    if (rangeType === "SEMVER" && !SEMVER.test(version) && !(key === "introduced" && version === "0") && !(key === "limit" && version === "*")) {
      this.fail(at(path, key), `${quote(version)} is not a SemVer 2.0 version (like 1.2.3 or 1.0.0-rc.1, without a "v"), as a SEMVER range needs`);
    }
    return out;
  }

  reference(value: unknown, path: string): Json {
    const out = this.object(value, path);
    this.required(out, "type", path, (v, p) => this.typeToken(v, p, OSV_LIMITS.referenceType));
    this.required(out, "url", path, (v, p) => {
      const url = this.token(v, p, OSV_LIMITS.url);
      if (!URL.canParse(url)) this.fail(p, `${quote(url)} is not an absolute URL`);
      return url;
    });
    return out;
  }

  credit(value: unknown, path: string): Json {
    const out = this.object(value, path);
    this.required(out, "name", path, (v, p) => this.token(v, p, OSV_LIMITS.creditName));
    this.optional(out, "contact", path, (v, p) => this.list(v, p, OSV_LIMITS.contacts, (item, q) => this.token(item, q, OSV_LIMITS.contact)));
    this.optional(out, "type", path, (v, p) => this.typeToken(v, p, OSV_LIMITS.creditType));
    return out;
  }
}

/**
 * Checks a parsed JSON document against the OSV schema and our bounds and returns it as a record:
 * a copy in which `null` optional fields are dropped and every other field is kept as it was.
 * Throws an OsvRecordError naming `source` and the JSON path of the first problem found (fields in
 * schema order, arrays in index order); kind "not-osv" when the document is not an OSV record at all.
 */
export function parseOsvRecord(json: unknown, source: string, options: ParseOsvOptions = {}): OsvRecord {
  // Serializing the record (to store it) recurses per level: a deep one would overflow the stack.
  if (nestedDeeperThan(json, OSV_LIMITS.depth)) throw new OsvRecordError(source, "", `nested more than ${OSV_LIMITS.depth} levels deep`, "invalid");
  return new Checker(source, options).record(json);
}

/** Whether arrays and objects nest in `json` more than `max` levels deep; without recursion, so any depth is measured. */
export function nestedDeeperThan(json: unknown, max: number): boolean {
  const pending: Array<[unknown, number]> = [[json, 0]];
  while (pending.length > 0) {
    const [value, depth] = pending.pop()!;
    if (value === null || typeof value !== "object") continue;
    if (depth + 1 > max) return true;
    for (const child of Array.isArray(value) ? value : Object.values(value)) pending.push([child, depth + 1]);
  }
  return false;
}

/**
 * Decodes one record file (UTF-8, an optional byte order mark skipped), parses its JSON and checks it
 * with parseOsvRecord. Throws an OsvRecordError: kind "not-json" for bytes that are not UTF-8 JSON.
 */
export function parseOsvDocument(bytes: Uint8Array, source: string, options: ParseOsvOptions = {}): OsvRecord {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new OsvRecordError(source, "", "not UTF-8 text", "not-json");
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new OsvRecordError(source, "", `not JSON: ${(error as Error).message}`, "not-json");
  }
  return parseOsvRecord(json, source, options);
}
