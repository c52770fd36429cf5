import assert from "node:assert/strict";
import { test } from "node:test";
import {
  entryFor,
  imageSize,
  indexArchitectures,
  InvalidManifest,
  MEDIA_TYPE,
  parseManifest,
  platformOfConfig,
  referencedDigests,
  type ImageIndex,
} from "../../src/domains/registry/manifest.js";

const d = (n: number) => `sha256:${n.toString(16).padStart(64, "0")}`;
const json = (value: unknown) => Buffer.from(JSON.stringify(value));
const image = {
  schemaVersion: 2,
  mediaType: MEDIA_TYPE.ociManifest,
  config: { mediaType: "application/vnd.oci.image.config.v1+json", digest: d(1), size: 100 },
  layers: [
    { mediaType: "application/vnd.oci.image.layer.v1.tar+gzip", digest: d(2), size: 1000 },
    { mediaType: "application/vnd.oci.image.layer.v1.tar+gzip", digest: d(3), size: 24 },
  ],
};
const index = {
  schemaVersion: 2,
  mediaType: MEDIA_TYPE.ociIndex,
  manifests: [
    { mediaType: MEDIA_TYPE.ociManifest, digest: d(10), size: 5, platform: { architecture: "amd64", os: "linux" } },
    { mediaType: MEDIA_TYPE.ociManifest, digest: d(11), size: 5, platform: { architecture: "arm64", os: "linux", variant: "v8" } },
    { mediaType: MEDIA_TYPE.ociManifest, digest: d(12), size: 5, platform: { architecture: "amd64", os: "windows" } },
    { mediaType: MEDIA_TYPE.ociManifest, digest: d(13), size: 5, platform: { architecture: "unknown", os: "unknown" } },
    { mediaType: MEDIA_TYPE.ociManifest, digest: d(14), size: 5 },
  ],
};

test("an image manifest: kind, size of config and layers, artifact type from its config, referenced blobs", () => {
  const m = parseManifest(json(image));
  assert.equal(m.kind, "image");
  if (m.kind !== "image") return;
  assert.equal(imageSize(m), 1124);
  assert.equal(m.artifactType, "application/vnd.oci.image.config.v1+json");
  assert.deepEqual(referencedDigests(m), { manifests: [], blobs: [d(1), d(2), d(3)], external: [] });
  assert.equal(parseManifest(json({ ...image, artifactType: "application/x.sbom" })).artifactType, "application/x.sbom");
});

test("an index: architectures in order, without duplicates or unknown platforms; linux preferred", () => {
  const m = parseManifest(json(index)) as ImageIndex;
  assert.equal(m.kind, "index");
  assert.deepEqual(indexArchitectures(m), ["amd64", "arm64"]);
  assert.equal(entryFor(m, "amd64")?.digest, d(10));
  assert.equal(entryFor(m, "arm64")?.platform?.variant, "v8");
  assert.equal(entryFor(m, "s390x"), undefined);
  assert.deepEqual(referencedDigests(m).manifests, [d(10), d(11), d(12), d(13), d(14)]);
});

test("media type: from the document, else the content type, else the shape; the two must agree", () => {
  const { mediaType: _a, ...bareImage } = image;
  const { mediaType: _b, ...bareIndex } = index;
  assert.equal(parseManifest(json(bareImage)).mediaType, MEDIA_TYPE.ociManifest);
  assert.equal(parseManifest(json(bareIndex)).kind, "index");
  assert.equal(parseManifest(json(bareImage), `${MEDIA_TYPE.dockerManifest}; charset=utf-8`).mediaType, MEDIA_TYPE.dockerManifest);
  assert.throws(() => parseManifest(json(image), MEDIA_TYPE.ociIndex), InvalidManifest);
  assert.equal(parseManifest(json({ ...index, mediaType: MEDIA_TYPE.dockerManifestList })).kind, "index");
});

test("refused: not JSON, wrong schema version, unknown media types, bad descriptors, oversized", () => {
  const bad: Array<[string, Buffer, string?]> = [
    ["not JSON", Buffer.from("{")],
    ["array", json([])],
    ["schema 1", json({ ...image, schemaVersion: 1 })],
    ["unknown media type", json({ ...image, mediaType: "application/json" })],
    ["content type unknown", json({ schemaVersion: 2, config: image.config, layers: [] }), "text/plain"],
    ["no config", json({ schemaVersion: 2, mediaType: MEDIA_TYPE.ociManifest, layers: [] })],
    ["layers not an array", json({ ...image, layers: {} })],
    ["uppercase digest", json({ ...image, config: { ...image.config, digest: d(1).toUpperCase() } })],
    ["sha384 (not held)", json({ ...image, config: { ...image.config, digest: `sha384:${"a".repeat(96)}` } })],
    ["sha512 of 64 hex", json({ ...image, config: { ...image.config, digest: `sha512:${"a".repeat(64)}` } })],
    ["negative size", json({ ...image, config: { ...image.config, size: -1 } })],
    ["platform without os", json({ ...index, manifests: [{ ...index.manifests[0], platform: { architecture: "amd64" } }] })],
    ["annotations not strings", json({ ...image, annotations: { a: 1 } })],
    ["oversized", Buffer.alloc(4 * 1024 * 1024 + 1, 32)],
  ];
  for (const [name, bytes, type] of bad) assert.throws(() => parseManifest(bytes, type), InvalidManifest, name);
});

test("sha512 descriptors are held; non-distributable layers are named but not needed", () => {
  const sha512 = `sha512:${"b".repeat(128)}`;
  const foreign = { mediaType: "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip", digest: d(7), size: 9 };
  const docker = { mediaType: "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip", digest: d(8), size: 9 };
  const m = parseManifest(json({ ...image, config: { ...image.config, digest: sha512 }, layers: [...image.layers, foreign, docker] }));
  assert.deepEqual(referencedDigests(m), { manifests: [], blobs: [sha512, d(2), d(3)], external: [d(7), d(8)] });
});

test("config platform: architecture and os, or empty strings", () => {
  assert.deepEqual(platformOfConfig(json({ architecture: "arm64", os: "linux" })), { architecture: "arm64", os: "linux" });
  assert.deepEqual(platformOfConfig(Buffer.from("nope")), { architecture: "", os: "" });
  assert.deepEqual(platformOfConfig(json({ architecture: 3 })), { architecture: "", os: "" });
});
