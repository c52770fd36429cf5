import { DIGEST, DIGEST_RULE, digestOf } from "./digests.js";

/**
 * Image manifests and indexes (OCI image spec v1.1, Docker schema 2): parsing
 * and the facts the API serves from them. Pure: no storage, no wire.
 */

export const MEDIA_TYPE = {
  ociManifest: "application/vnd.oci.image.manifest.v1+json",
  ociIndex: "application/vnd.oci.image.index.v1+json",
  dockerManifest: "application/vnd.docker.distribution.manifest.v2+json",
  dockerManifestList: "application/vnd.docker.distribution.manifest.list.v2+json",
} as const;

const INDEX_TYPES: ReadonlySet<string> = new Set([MEDIA_TYPE.ociIndex, MEDIA_TYPE.dockerManifestList]);
const IMAGE_TYPES: ReadonlySet<string> = new Set([MEDIA_TYPE.ociManifest, MEDIA_TYPE.dockerManifest]);
/** Every manifest media type the registry stores. */
export const MANIFEST_MEDIA_TYPES: readonly string[] = [...IMAGE_TYPES, ...INDEX_TYPES];

/** Largest manifest the registry accepts (as common registries do), bytes. */
export const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;
export { DIGEST };

export interface Platform {
  architecture: string;
  os: string;
  variant?: string;
}

export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  platform?: Platform;
  artifactType?: string;
  annotations?: Record<string, string>;
}

interface Common {
  mediaType: string;
  /** The subject this manifest refers to (referrers API), if any. */
  subject?: Descriptor;
  /** The manifest's `artifactType`, else (for an image) its config's media type. */
  artifactType: string;
  annotations: Record<string, string>;
}

export interface ImageManifest extends Common {
  kind: "image";
  config: Descriptor;
  layers: Descriptor[];
}

export interface ImageIndex extends Common {
  kind: "index";
  manifests: Descriptor[];
}

export type Manifest = ImageManifest | ImageIndex;

/** The manifest is not one the registry accepts; `message` says why. */
export class InvalidManifest extends Error {}

/** The sha256 digest of `bytes`: what a manifest pushed by tag is named by. */
export function sha256Digest(bytes: Uint8Array): string {
  return digestOf(bytes);
}

/** True for media types the registry stores as manifests (parameters such as `; charset` ignored). */
export function isManifestMediaType(mediaType: string): boolean {
  return MANIFEST_MEDIA_TYPES.includes(bareMediaType(mediaType));
}

function bareMediaType(mediaType: string): string {
  return mediaType.split(";")[0].trim().toLowerCase();
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function stringMap(value: unknown, where: string): Record<string, string> {
  if (value === undefined) return {};
  if (!isObject(value) || !Object.values(value).every((v) => typeof v === "string")) throw new InvalidManifest(`${where} must map strings to strings`);
  return value as Record<string, string>;
}

function descriptor(value: unknown, where: string): Descriptor {
  if (!isObject(value)) throw new InvalidManifest(`${where} must be a descriptor object`);
  const { mediaType, digest, size, platform, artifactType } = value;
  if (typeof mediaType !== "string" || mediaType === "") throw new InvalidManifest(`${where}.mediaType is required`);
  if (typeof digest !== "string" || !DIGEST.test(digest)) throw new InvalidManifest(`${where}.digest is not a supported digest: ${DIGEST_RULE}`);
  if (typeof size !== "number" || !Number.isSafeInteger(size) || size < 0) throw new InvalidManifest(`${where}.size must be a non-negative integer`);
  const out: Descriptor = { mediaType, digest, size };
  if (platform !== undefined) {
    if (!isObject(platform) || typeof platform.architecture !== "string" || typeof platform.os !== "string") {
      throw new InvalidManifest(`${where}.platform needs architecture and os`);
    }
    out.platform = { architecture: platform.architecture, os: platform.os };
    if (typeof platform.variant === "string") out.platform.variant = platform.variant;
  }
  if (artifactType !== undefined) {
    if (typeof artifactType !== "string") throw new InvalidManifest(`${where}.artifactType must be a string`);
    out.artifactType = artifactType;
  }
  if (value.annotations !== undefined) out.annotations = stringMap(value.annotations, `${where}.annotations`);
  return out;
}

function descriptors(value: unknown, where: string): Descriptor[] {
  if (!Array.isArray(value)) throw new InvalidManifest(`${where} must be an array`);
  return value.map((d, i) => descriptor(d, `${where}[${i}]`));
}

/**
 * Parses a manifest. `contentType` (the media type it was sent or stored with) must agree
 * with the document's own `mediaType` when both are present; a document without either is
 * recognised by its shape (`manifests` for an index, `config` for an image).
 * Throws InvalidManifest.
 */
export function parseManifest(bytes: Uint8Array, contentType?: string): Manifest {
  if (bytes.length > MAX_MANIFEST_BYTES) throw new InvalidManifest(`a manifest is at most ${MAX_MANIFEST_BYTES} bytes`);
  let doc: unknown;
  try {
    doc = JSON.parse(Buffer.from(bytes).toString("utf8"));
  } catch {
    throw new InvalidManifest("the manifest is not JSON");
  }
  if (!isObject(doc)) throw new InvalidManifest("the manifest must be a JSON object");
  if (doc.schemaVersion !== 2) throw new InvalidManifest("schemaVersion must be 2");
  const declared = typeof doc.mediaType === "string" ? bareMediaType(doc.mediaType) : undefined;
  const sent = contentType !== undefined && contentType !== "" ? bareMediaType(contentType) : undefined;
  if (declared !== undefined && sent !== undefined && declared !== sent) {
    throw new InvalidManifest(`the manifest's mediaType ${declared} differs from its content type ${sent}`);
  }
  const mediaType = declared ?? sent ?? ("manifests" in doc ? MEDIA_TYPE.ociIndex : MEDIA_TYPE.ociManifest);
  if (!isManifestMediaType(mediaType)) throw new InvalidManifest(`unsupported manifest media type ${mediaType}`);
  const subject = doc.subject === undefined ? undefined : descriptor(doc.subject, "subject");
  if (doc.artifactType !== undefined && typeof doc.artifactType !== "string") throw new InvalidManifest("artifactType must be a string");
  const annotations = stringMap(doc.annotations, "annotations");

  if (INDEX_TYPES.has(mediaType)) {
    return {
      kind: "index",
      mediaType,
      manifests: descriptors(doc.manifests, "manifests"),
      subject,
      artifactType: (doc.artifactType as string | undefined) ?? "",
      annotations,
    };
  }
  const config = descriptor(doc.config, "config");
  return {
    kind: "image",
    mediaType,
    config,
    layers: descriptors(doc.layers, "layers"),
    subject,
    artifactType: (doc.artifactType as string | undefined) ?? config.mediaType,
    annotations,
  };
}

/** Bytes of an image: its config and its layers, as the manifest declares them. */
export function imageSize(manifest: ImageManifest): number {
  return manifest.config.size + manifest.layers.reduce((sum, layer) => sum + layer.size, 0);
}

/** Entries of an index that are images of a real platform (not attestations, whose platform is `unknown`). */
export function platformEntries(index: ImageIndex): Array<Descriptor & { platform: Platform }> {
  return index.manifests.filter(
    (d): d is Descriptor & { platform: Platform } => d.platform !== undefined && d.platform.architecture !== "unknown" && d.platform.architecture !== "",
  );
}

/** Distinct architectures of an index, in the order it lists them. */
export function indexArchitectures(index: ImageIndex): string[] {
  return [...new Set(platformEntries(index).map((d) => d.platform.architecture))];
}

/** The entry of an index for `architecture`, preferring `linux` when several operating systems have one. */
export function entryFor(index: ImageIndex, architecture: string): Descriptor | undefined {
  const candidates = platformEntries(index).filter((d) => d.platform.architecture === architecture);
  return candidates.find((d) => d.platform.os === "linux") ?? candidates[0];
}

/** Architecture and OS of an image config blob (JSON), or empty strings when it does not say. */
export function platformOfConfig(config: Uint8Array): { architecture: string; os: string } {
  try {
    const doc: unknown = JSON.parse(Buffer.from(config).toString("utf8"));
    if (!isObject(doc)) return { architecture: "", os: "" };
    return {
      architecture: typeof doc.architecture === "string" ? doc.architecture : "",
      os: typeof doc.os === "string" ? doc.os : "",
    };
  } catch {
    return { architecture: "", os: "" };
  }
}

/**
 * The digests a manifest needs to be present: child manifests of an index; config and layers of an
 * image; and the non-distributable layers it names, which it does not need (`external`).
 */
export function referencedDigests(manifest: Manifest): { manifests: string[]; blobs: string[]; external: string[] } {
  if (manifest.kind === "index") return { manifests: manifest.manifests.map((d) => d.digest), blobs: [], external: [] };
  const layers = manifest.layers.filter((d) => !isNonDistributable(d.mediaType));
  const external = manifest.layers.filter((d) => isNonDistributable(d.mediaType));
  return { manifests: [], blobs: [manifest.config.digest, ...layers.map((d) => d.digest)], external: external.map((d) => d.digest) };
}

/**
 * A layer a registry need not hold: the image spec's non-distributable layers (deprecated in 1.1,
 * still pushed) and Docker's foreign layers, whose bytes live at their descriptor's `urls`. A
 * manifest naming one is accepted without it; when a client pushed it anyway it is kept as any blob.
 */
export function isNonDistributable(mediaType: string): boolean {
  return /^application\/vnd\.oci\.image\.layer\.nondistributable\.|^application\/vnd\.docker\.image\.rootfs\.foreign\./.test(mediaType);
}
