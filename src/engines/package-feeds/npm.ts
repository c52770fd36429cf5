import { isObject, LibraryDocumentError, stringOr, timeOf, type LibraryPackage, type LibraryVersion } from "./library-package.js";

/** npm package names: lower case, optionally scoped, URL-safe (the npm registry's rules for new names). */
const NPM_NAME = /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9._~-][a-z0-9._~-]*$/i;

/**
 * An npm package document: the npm registry's package endpoint (`GET /<name>`: `versions` is an object
 * of version manifests) or `npm view <name> --json` (`versions` is an array of version strings; the
 * latest manifest's fields sit at the top level). `time` maps versions to publish times in both.
 */
export function parseNpmDocument(doc: unknown, source: string): LibraryPackage {
  if (!isObject(doc) || typeof doc.name !== "string" || !("versions" in doc)) throw new LibraryDocumentError(source, "not an npm package document (needs `name` and `versions`)");
  const name = doc.name;
  if (!NPM_NAME.test(name) || name.length > 214) throw new LibraryDocumentError(source, `name: "${name}" is not an npm package name`);
  const time = isObject(doc.time) ? doc.time : {};
  const distTags = isObject(doc["dist-tags"]) ? doc["dist-tags"] : {};
  let versions: LibraryVersion[];
  let description = stringOr(doc.description);
  if (Array.isArray(doc.versions)) {
    versions = doc.versions.map((v, i) => {
      if (typeof v !== "string" || v === "") throw new LibraryDocumentError(source, `versions[${i}]: not a version string`);
      const size = v === doc.version && isObject(doc.dist) ? doc.dist.unpackedSize : undefined;
      return { version: v, sizeBytes: typeof size === "number" ? size : 0, publishTime: timeOf(time[v]) };
    });
  } else if (isObject(doc.versions)) {
    versions = Object.entries(doc.versions).map(([v, manifest]) => {
      if (!isObject(manifest)) throw new LibraryDocumentError(source, `versions["${v}"]: not a version manifest`);
      const size = isObject(manifest.dist) ? manifest.dist.unpackedSize : undefined;
      return { version: v, sizeBytes: typeof size === "number" ? size : 0, publishTime: timeOf(time[v]), description: typeof manifest.description === "string" ? manifest.description : undefined };
    });
    if (description === "") {
      const latest = typeof distTags.latest === "string" ? doc.versions[distTags.latest] : undefined;
      description = isObject(latest) ? stringOr(latest.description) : "";
    }
  } else {
    throw new LibraryDocumentError(source, "versions: neither an object of manifests nor an array of versions");
  }
  return { ecosystem: "npm", name, description, versions };
}
