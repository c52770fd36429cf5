import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { MEDIA_TYPE } from "../../src/domains/registry/manifest.js";

/**
 * Builds real OCI image layouts for tests: gzip'd tar layers, a config blob, image
 * manifests and (for several platforms) an image index, as `skopeo` and other
 * registry clients read them.
 */

export interface Blob {
  digest: string;
  size: number;
  bytes: Buffer;
  mediaType: string;
}

export interface BuiltImage {
  manifest: Blob;
  config: Blob;
  layers: Blob[];
  architecture: string;
  /** Config plus layers, bytes. */
  imageSize: number;
}

export interface BuiltLayout {
  dir: string;
  /** The top-level manifest (the index when there are several platforms). */
  top: Blob;
  images: BuiltImage[];
  index?: Blob;
}

const sha256 = (bytes: Buffer) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;

export function blobOf(bytes: Buffer, mediaType: string): Blob {
  return { digest: sha256(bytes), size: bytes.length, bytes, mediaType };
}

/** A ustar archive holding one regular file. */
export function tarOf(name: string, content: Buffer): Buffer {
  const header = Buffer.alloc(512);
  header.write(name, 0, 100, "utf8");
  header.write("0000644\0", 100);
  header.write("0000000\0", 108);
  header.write("0000000\0", 116);
  header.write(`${content.length.toString(8).padStart(11, "0")}\0`, 124);
  header.write("00000000000\0", 136);
  header.write("        ", 148); // checksum placeholder
  header.write("0", 156);
  header.write("ustar\0", 257);
  header.write("00", 263);
  let sum = 0;
  for (const byte of header) sum += byte;
  header.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148);
  const padding = Buffer.alloc((512 - (content.length % 512)) % 512);
  return Buffer.concat([header, content, padding, Buffer.alloc(1024)]);
}

/** An image manifest for one architecture with `layerBytes` of random file content per layer. */
export function buildImage(options: { architecture: string; layerBytes?: number[]; label?: string }): BuiltImage {
  const tars = (options.layerBytes ?? [1024]).map((n, i) => tarOf(`file-${i}.bin`, randomBytes(n)));
  const layers = tars.map((tar) => blobOf(gzipSync(tar), "application/vnd.oci.image.layer.v1.tar+gzip"));
  return imageOfLayers(options.architecture, layers, { diffIds: tars.map(sha256), labels: { test: options.label ?? "image" } });
}

export function indexOf(images: BuiltImage[]): Blob {
  return blobOf(
    Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: MEDIA_TYPE.ociIndex,
        manifests: images.map((i) => ({
          mediaType: i.manifest.mediaType,
          digest: i.manifest.digest,
          size: i.manifest.size,
          platform: { architecture: i.architecture, os: "linux" },
        })),
      }),
    ),
    MEDIA_TYPE.ociIndex,
  );
}

/**
 * Writes an OCI image layout into `dir`: one image per architecture, under an index when
 * there are several. `ref` names the top-level manifest (`org.opencontainers.image.ref.name`).
 */
export function writeLayout(dir: string, options: { architectures: string[]; ref?: string; layerBytes?: number[]; label?: string }): BuiltLayout {
  const images = options.architectures.map((architecture) => buildImage({ architecture, layerBytes: options.layerBytes, label: options.label }));
  return writeImagesLayout(dir, images, options.ref);
}

/**
 * An image manifest of one architecture over the given layer blobs (gzip'd, zstd'd or plain tars).
 * `diffIds` are the uncompressed layers' digests (default: the blobs' own, which registries do not check).
 */
export function imageOfLayers(architecture: string, layers: Blob[], options: { diffIds?: string[]; labels?: Record<string, string> } = {}): BuiltImage {
  const config = blobOf(
    Buffer.from(
      JSON.stringify({
        architecture,
        os: "linux",
        config: options.labels ? { Labels: options.labels } : {},
        rootfs: { type: "layers", diff_ids: options.diffIds ?? layers.map((l) => l.digest) },
      }),
    ),
    "application/vnd.oci.image.config.v1+json",
  );
  const manifest = manifestOf(config, layers);
  return { manifest, config, layers, architecture, imageSize: config.size + layers.reduce((s, l) => s + l.size, 0) };
}

/** Writes an OCI image layout of the given images (under an index when there are several), `ref` naming the top. */
export function writeImagesLayout(dir: string, images: BuiltImage[], ref?: string): BuiltLayout {
  const index = images.length > 1 ? indexOf(images) : undefined;
  const top = index ?? images[0].manifest;
  const blobs = join(dir, "blobs", "sha256");
  mkdirSync(blobs, { recursive: true });
  const put = (b: Blob) => writeFileSync(join(blobs, b.digest.slice("sha256:".length)), b.bytes);
  for (const image of images) [image.manifest, image.config, ...image.layers].forEach(put);
  if (index) put(index);
  writeFileSync(join(dir, "oci-layout"), JSON.stringify({ imageLayoutVersion: "1.0.0" }));
  writeFileSync(
    join(dir, "index.json"),
    JSON.stringify({
      schemaVersion: 2,
      mediaType: MEDIA_TYPE.ociIndex,
      manifests: [{ mediaType: top.mediaType, digest: top.digest, size: top.size, annotations: ref ? { "org.opencontainers.image.ref.name": ref } : undefined }],
    }),
  );
  return { dir, top, images, index };
}

/**
 * Writes a single-image OCI layout whose layers are uncompressed tar archives of one file of
 * `layerBytes[i]` random bytes each, streamed to disk (the test process never holds a layer),
 * for imports of hundreds of megabytes. Returns the total size of its blobs.
 */
export async function writeLargeLayout(dir: string, options: { layerBytes: number[]; ref?: string }): Promise<{ dir: string; top: Blob; blobBytes: number }> {
  const blobs = join(dir, "blobs", "sha256");
  mkdirSync(blobs, { recursive: true });
  const layers: Array<{ digest: string; size: number }> = [];
  for (const [i, bytes] of options.layerBytes.entries()) {
    const temp = join(dir, `layer-${i}.tmp`);
    const file = await open(temp, "w");
    const hash = createHash("sha256");
    const write = async (chunk: Buffer) => {
      hash.update(chunk);
      await file.write(chunk);
    };
    const header = tarOf(`file-${i}.bin`, Buffer.alloc(0)).subarray(0, 512);
    header.write(`${bytes.toString(8).padStart(11, "0")}\0`, 124);
    header.write("        ", 148);
    let sum = 0;
    for (const byte of header) sum += byte;
    header.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148);
    await write(header);
    for (let left = bytes; left > 0; left -= 1024 * 1024) await write(randomBytes(Math.min(left, 1024 * 1024)));
    await write(Buffer.alloc((512 - (bytes % 512)) % 512 + 1024));
    const size = (await file.stat()).size;
    await file.close();
    const digest = `sha256:${hash.digest("hex")}`;
    renameSync(temp, join(blobs, digest.slice("sha256:".length)));
    layers.push({ digest, size });
  }
  const config = blobOf(
    Buffer.from(JSON.stringify({ architecture: "amd64", os: "linux", rootfs: { type: "layers", diff_ids: layers.map((l) => l.digest) } })),
    "application/vnd.oci.image.config.v1+json",
  );
  const manifest = manifestOf(config, layers.map((l) => ({ mediaType: "application/vnd.oci.image.layer.v1.tar", ...l })));
  for (const b of [config, manifest]) writeFileSync(join(blobs, b.digest.slice("sha256:".length)), b.bytes);
  writeFileSync(join(dir, "oci-layout"), JSON.stringify({ imageLayoutVersion: "1.0.0" }));
  const annotations = options.ref ? { "org.opencontainers.image.ref.name": options.ref } : undefined;
  writeFileSync(
    join(dir, "index.json"),
    JSON.stringify({ schemaVersion: 2, mediaType: MEDIA_TYPE.ociIndex, manifests: [{ mediaType: manifest.mediaType, digest: manifest.digest, size: manifest.size, annotations }] }),
  );
  return { dir, top: manifest, blobBytes: config.size + layers.reduce((sum, l) => sum + l.size, 0) };
}

/** The OCI image manifest blob of `config` over `layers`, each described by its media type, digest and size. */
function manifestOf(config: Blob, layers: Array<{ mediaType: string; digest: string; size: number }>): Blob {
  const descriptor = (b: { mediaType: string; digest: string; size: number }) => ({ mediaType: b.mediaType, digest: b.digest, size: b.size });
  return blobOf(
    Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: MEDIA_TYPE.ociManifest, config: descriptor(config), layers: layers.map(descriptor) })),
    MEDIA_TYPE.ociManifest,
  );
}
