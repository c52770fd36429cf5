import { generateKeyPairSync, sign, type KeyObject } from "node:crypto";
import { blobOf, type Blob } from "./oci-layout.js";

/**
 * Signatures and attestations in cosign's published formats, made by the tests from their own keys
 * with node:crypto: simple-signing payloads signed with ECDSA P-256 (the `.sig` tag scheme and OCI 1.1
 * referrers), and in-toto statements in DSSE envelopes (the `.att` tag scheme).
 */

export const SIMPLE_SIGNING = "application/vnd.dev.cosign.simplesigning.v1+json";
export const DSSE_ENVELOPE = "application/vnd.dsse.envelope.v1+json";
export const COSIGN_SIG_ARTIFACT = "application/vnd.dev.cosign.artifact.sig.v1+json";
export const SPDX_PREDICATE = "https://spdx.dev/Document";

export interface TestKey {
  privateKey: KeyObject;
  publicPem: string;
}

/** A new ECDSA P-256 key pair (cosign's default), or another kind node:crypto makes. */
export function newKey(kind: "p256" | "p384" | "ed25519" | "rsa" = "p256"): TestKey {
  const pair =
    kind === "ed25519"
      ? generateKeyPairSync("ed25519")
      : kind === "rsa"
        ? generateKeyPairSync("rsa", { modulusLength: 2048 })
        : generateKeyPairSync("ec", { namedCurve: kind === "p256" ? "prime256v1" : "secp384r1" });
  return { privateKey: pair.privateKey, publicPem: pair.publicKey.export({ type: "spki", format: "pem" }).toString() };
}

/** Signs as cosign does: ECDSA (DER) over SHA-256, Ed25519 over the bytes. */
export function signBytes(key: TestKey, data: Buffer): Buffer {
  return sign(key.privateKey.asymmetricKeyType === "ed25519" ? null : "sha256", data, key.privateKey);
}

/** Cosign's simple-signing payload for an image digest. */
export function simpleSigningPayload(digest: string, reference = "registry.test/acme/app"): Buffer {
  return Buffer.from(
    JSON.stringify({
      critical: { identity: { "docker-reference": reference }, image: { "docker-manifest-digest": digest }, type: "cosign container image signature" },
      optional: null,
    }),
  );
}

/** `sha256-<hex>.sig` (or `.att`): cosign's tag for what it attaches to `digest`. */
export function attachmentTag(digest: string, suffix: "sig" | "att"): string {
  return `${digest.replace(":", "-")}.${suffix}`;
}

/** An empty config blob, as cosign's signature manifests carry. */
export const EMPTY_CONFIG = blobOf(Buffer.from("{}"), "application/vnd.oci.image.config.v1+json");

/** A signature manifest (its layer blobs to push first): one layer per payload, its signature as cosign's annotation. */
export function signatureManifest(layers: Array<{ payload: Buffer; signature: Buffer }>, options: { subject?: Blob; artifactType?: string } = {}): { manifest: Buffer; blobs: Blob[] } {
  const blobs = layers.map((l) => blobOf(l.payload, SIMPLE_SIGNING));
  const manifest = {
    schemaVersion: 2,
    mediaType: "application/vnd.oci.image.manifest.v1+json",
    ...(options.artifactType ? { artifactType: options.artifactType } : {}),
    config: { mediaType: EMPTY_CONFIG.mediaType, digest: EMPTY_CONFIG.digest, size: EMPTY_CONFIG.size },
    layers: blobs.map((b, i) => ({ mediaType: b.mediaType, digest: b.digest, size: b.size, annotations: { "dev.cosignproject.cosign/signature": layers[i].signature.toString("base64") } })),
    ...(options.subject ? { subject: { mediaType: options.subject.mediaType, digest: options.subject.digest, size: options.subject.size } } : {}),
  };
  return { manifest: Buffer.from(JSON.stringify(manifest)), blobs: [EMPTY_CONFIG, ...blobs] };
}

/** DSSE's pre-authentication encoding (the DSSE spec's PAE), written here independently of the server's. */
export function pae(payloadType: string, payload: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`DSSEv1 ${Buffer.byteLength(payloadType)} ${payloadType} ${payload.length} `), payload]);
}

/** An in-toto statement about `digest` with an SPDX predicate. */
export function sbomStatement(digest: string, predicateType = SPDX_PREDICATE): Buffer {
  const [algorithm, hex] = digest.split(":");
  return Buffer.from(
    JSON.stringify({
      _type: "https://in-toto.io/Statement/v0.1",
      predicateType,
      subject: [{ name: "registry.test/acme/app", digest: { [algorithm]: hex } }],
      predicate: { spdxVersion: "SPDX-2.3", SPDXID: "SPDXRef-DOCUMENT", name: "app", packages: [{ name: "zlib", versionInfo: "1.2.13", SPDXID: "SPDXRef-zlib", externalRefs: [{ referenceCategory: "PACKAGE-MANAGER", referenceType: "purl", referenceLocator: "pkg:deb/debian/zlib@1.2.13" }] }] },
    }),
  );
}

/** A DSSE envelope of an in-toto statement signed by `key` over its PAE (`tamper` changes the payload after signing). */
export function dsseEnvelope(statement: Buffer, key: TestKey, options: { tamper?: boolean } = {}): Buffer {
  const type = "application/vnd.in-toto+json";
  const sig = signBytes(key, pae(type, statement));
  const payload = options.tamper ? Buffer.from(statement.toString().replace("zlib", "zlob")) : statement;
  return Buffer.from(JSON.stringify({ payloadType: type, payload: payload.toString("base64"), signatures: [{ keyid: "", sig: sig.toString("base64") }] }));
}

/** Cosign's attestation manifest (`.att`): one DSSE envelope layer per attestation. */
export function attestationManifest(envelopes: Buffer[], predicateType = SPDX_PREDICATE): { manifest: Buffer; blobs: Blob[] } {
  const blobs = envelopes.map((e) => blobOf(e, DSSE_ENVELOPE));
  const manifest = {
    schemaVersion: 2,
    mediaType: "application/vnd.oci.image.manifest.v1+json",
    config: { mediaType: EMPTY_CONFIG.mediaType, digest: EMPTY_CONFIG.digest, size: EMPTY_CONFIG.size },
    layers: blobs.map((b) => ({ mediaType: b.mediaType, digest: b.digest, size: b.size, annotations: { "dev.cosignproject.cosign/signature": "", predicateType } })),
  };
  return { manifest: Buffer.from(JSON.stringify(manifest)), blobs: [EMPTY_CONFIG, ...blobs] };
}
