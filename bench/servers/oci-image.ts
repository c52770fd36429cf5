import { createHash, randomFillSync } from "node:crypto";
import { MEDIA_TYPE } from "../../src/domains/registry/manifest.js";
import { ORGANIZATION_NAME } from "./tag-history.js";

/**
 * The image of the registry pull figures: one uncompressed tar layer holding a file of
 * LAYER_FILE_BYTES random bytes, its config and its OCI image manifest. The platform
 * server generates it (the layer is random, so it exists once, in the server's content
 * store) and announces a SeededImage; the plain node:http baseline serves the same file
 * and manifest bytes with the registry's headers, and the bench verifies both answers.
 */

/** The repo (`<organization>/<image>`) and the tag of the image. */
export const PULL_IMAGE = "pull";
export const PULL_TAG = "v1";
export const PULL_REPOSITORY = `${ORGANIZATION_NAME}/${PULL_IMAGE}`;
/** Random bytes of the layer's one file (the layer blob adds 2.5 KiB of tar headers and padding). */
export const LAYER_FILE_BYTES = 50 * 1000 * 1000;
/** `GET` this on the registry host (and on the baseline) for the manifest. */
export const MANIFEST_PATH = `/v2/${PULL_REPOSITORY}/manifests/${PULL_TAG}`;
/** `GET` this for a blob of the repo. */
export const blobPath = (digest: string) => `/v2/${PULL_REPOSITORY}/blobs/${digest}`;

/** What `platform.ts` seeded, as it announces it (and as the baseline gets it, JSON in argv). */
export interface SeededImage {
  /** The layer blob: its digest, size and the file the content store wrote it to. */
  layer: { digest: string; size: number; file: string };
  /** The manifest `MANIFEST_PATH` answers: its digest, media type and bytes (UTF-8 JSON). */
  manifest: { digest: string; mediaType: string; text: string };
}

const sha256 = (bytes: Uint8Array) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;

/** A ustar archive holding one regular file of `size` random bytes, built in one buffer. */
export function randomTar(name: string, size: number): Buffer {
  const padding = (512 - (size % 512)) % 512;
  const tar = Buffer.alloc(512 + size + padding + 1024);
  tar.write(name, 0, 100, "utf8");
  tar.write("0000644\0", 100);
  tar.write("0000000\0", 108);
  tar.write("0000000\0", 116);
  tar.write(`${size.toString(8).padStart(11, "0")}\0`, 124);
  tar.write("00000000000\0", 136);
  tar.write("        ", 148); // checksum placeholder
  tar.write("0", 156);
  tar.write("ustar\0", 257);
  tar.write("00", 263);
  let sum = 0;
  for (let i = 0; i < 512; i++) sum += tar[i];
  tar.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148);
  randomFillSync(tar, 512, size);
  return tar;
}

/** The image's blobs and manifest bytes (about 0.3 s, most of it generating the random bytes). */
export function buildPullImage(): { layer: Buffer; config: Buffer; manifest: Buffer } {
  const layer = randomTar("random.bin", LAYER_FILE_BYTES);
  const layerDigest = sha256(layer);
  const config = Buffer.from(
    JSON.stringify({ architecture: "amd64", os: "linux", config: {}, rootfs: { type: "layers", diff_ids: [layerDigest] } }),
  );
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: MEDIA_TYPE.ociManifest,
      config: { mediaType: "application/vnd.oci.image.config.v1+json", digest: sha256(config), size: config.length },
      layers: [{ mediaType: "application/vnd.oci.image.layer.v1.tar", digest: layerDigest, size: layer.length }],
    }),
  );
  return { layer, config, manifest };
}

/** The headers the registry host answers a blob GET with (src/transport/oci/blob-endpoints.ts, handleBlob). */
export function blobHeaders(digest: string, size: number): Record<string, string> {
  return {
    "docker-distribution-api-version": "registry/2.0",
    "content-type": "application/octet-stream",
    "docker-content-digest": digest,
    etag: `"${digest}"`,
    "accept-ranges": "bytes",
    "cache-control": "max-age=31536000",
    "content-length": String(size),
  };
}

/** The headers the registry host answers a manifest GET with (src/transport/oci/manifest-endpoints.ts, handleManifestGet). */
export function manifestHeaders(manifest: SeededImage["manifest"]): Record<string, string> {
  return {
    "docker-distribution-api-version": "registry/2.0",
    "content-type": manifest.mediaType,
    "content-length": String(Buffer.byteLength(manifest.text)),
    "docker-content-digest": manifest.digest,
    etag: `"${manifest.digest}"`,
  };
}
