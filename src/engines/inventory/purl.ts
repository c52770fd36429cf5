// Package URLs (https://github.com/package-url/purl-spec): `pkg:type/namespace/name@version?qualifiers#subpath`.
// Pure: parse and format, nothing else. The canonical form written here lowercases the type,
// percent-encodes each component (`:` left as is, so Debian epochs read `1:2.3-4`), sorts the
// qualifiers by key and drops empty ones.

export interface Purl {
  /** Lowercase: `npm`, `cargo`, `deb`, `apk`, `pypi`, `maven`, `golang`, ... */
  type: string;
  /** Decoded; segments joined by `/` (`@scope` for npm, the group for Maven). "" when none. */
  namespace: string;
  name: string;
  /** "" when the purl has none. */
  version: string;
  qualifiers: Record<string, string>;
  subpath: string;
}

/** The purl is not one (`message` says why). */
export class PurlError extends Error {
  override readonly name = "PurlError";
}

/** Longest purl read; SBOMs name packages in far less. */
export const MAX_PURL_LENGTH = 2048;

const TYPE = /^[a-z][a-z0-9.+-]*$/;

function decode(part: string, what: string, purl: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new PurlError(`${purl}: the ${what} is not valid percent-encoding`);
  }
}

const encode = (text: string) => encodeURIComponent(text).replace(/%3A/gi, ":");

/** Parses a purl. Throws PurlError. */
export function parsePurl(text: string): Purl {
  if (text.length > MAX_PURL_LENGTH) throw new PurlError(`a purl is at most ${MAX_PURL_LENGTH} characters`);
  if (!/^pkg:/i.test(text)) throw new PurlError(`${text}: a purl starts with pkg:`);
  let rest = text.slice(4).replace(/^\/+/, "");
  let subpath = "";
  const hash = rest.indexOf("#");
  if (hash >= 0) {
    subpath = rest
      .slice(hash + 1)
      .split("/")
      .filter((s) => s !== "" && s !== "." && s !== "..")
      .map((s) => decode(s, "subpath", text))
      .join("/");
    rest = rest.slice(0, hash);
  }
  const qualifiers: Record<string, string> = {};
  const question = rest.indexOf("?");
  if (question >= 0) {
    for (const pair of rest.slice(question + 1).split("&")) {
      if (pair === "") continue;
      const eq = pair.indexOf("=");
      if (eq <= 0) throw new PurlError(`${text}: the qualifier ${pair} has no key=value`);
      const value = decode(pair.slice(eq + 1), "qualifier value", text);
      if (value !== "") qualifiers[pair.slice(0, eq).toLowerCase()] = value;
    }
    rest = rest.slice(0, question);
  }
  const slash = rest.indexOf("/");
  if (slash < 0) throw new PurlError(`${text}: a purl names a type and a name`);
  const type = rest.slice(0, slash).toLowerCase();
  if (!TYPE.test(type)) throw new PurlError(`${text}: ${type} is not a purl type`);
  rest = rest.slice(slash + 1).replace(/\/+$/, "");
  let version = "";
  const at = rest.lastIndexOf("@");
  if (at >= 0 && at > rest.lastIndexOf("/")) {
    version = decode(rest.slice(at + 1), "version", text);
    rest = rest.slice(0, at);
  }
  const segments = rest.split("/").filter((s) => s !== "");
  if (segments.length === 0) throw new PurlError(`${text}: a purl names a package`);
  const name = decode(segments.pop()!, "name", text);
  const namespace = segments.map((s) => decode(s, "namespace", text)).join("/");
  if (name === "") throw new PurlError(`${text}: the name is empty`);
  return { type, namespace, name, version, qualifiers, subpath };
}

/** The canonical text of a purl. */
export function formatPurl(purl: Pick<Purl, "type" | "name"> & Partial<Purl>): string {
  let out = `pkg:${purl.type.toLowerCase()}/`;
  if (purl.namespace) out += `${purl.namespace.split("/").map(encode).join("/")}/`;
  out += encode(purl.name);
  if (purl.version) out += `@${encode(purl.version)}`;
  const keys = Object.keys(purl.qualifiers ?? {})
    .filter((k) => purl.qualifiers![k] !== "")
    .sort();
  if (keys.length > 0) out += `?${keys.map((k) => `${k.toLowerCase()}=${encode(purl.qualifiers![k])}`).join("&")}`;
  if (purl.subpath) out += `#${purl.subpath.split("/").map(encode).join("/")}`;
  return out;
}

/** A purl without its qualifiers and subpath: what names one package at one version. */
export function purlIdentity(purl: Purl): string {
  return formatPurl({ type: purl.type, namespace: purl.namespace, name: purl.name, version: purl.version });
}
