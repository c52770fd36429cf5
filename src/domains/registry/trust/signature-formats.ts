import type { Manifest } from "../manifest.js";

/**
 * The signature formats the registry verifies, read from a pushed manifest (pure: the layers'
 * bytes are handed in). Cosign's tag scheme (`sha256-<hex>.sig`, `.att`) and OCI 1.1 referrers
 * (a manifest whose `subject` is the image) carry:
 * - simple-signing layers (`application/vnd.dev.cosign.simplesigning.v1+json`): the payload is
 *   the layer, signed as is; the signature is the layer's `dev.cosignproject.cosign/signature`
 *   annotation (base64), and the payload's `critical.image.docker-manifest-digest` must be the
 *   signed image's digest;
 * - DSSE envelopes (`application/vnd.dsse.envelope.v1+json`): an in-toto statement, signed over
 *   the envelope's pre-authentication encoding (PAE), naming the image among its subjects.
 * Sigstore bundles (`application/vnd.dev.sigstore.bundle.v0.3+json`) are recognised as signature
 * artifacts but not verified (docs/decisions.md, "Supply-chain trust").
 */

export const SIGNATURE_MEDIA_TYPE = {
  simpleSigning: "application/vnd.dev.cosign.simplesigning.v1+json",
  dsseEnvelope: "application/vnd.dsse.envelope.v1+json",
  sigstoreBundle: "application/vnd.dev.sigstore.bundle.v0.3+json",
  cosignArtifact: "application/vnd.dev.cosign.artifact.sig.v1+json",
} as const;

/** The layer annotation holding a simple-signing signature. */
export const COSIGN_SIGNATURE_ANNOTATION = "dev.cosignproject.cosign/signature";

/** Cosign's tags for what is attached to an image: `<alg>-<hex>.sig|.att|.sbom`. */
const ATTACHMENT_TAG = /^(sha256|sha512)-([a-f0-9]{64}|[a-f0-9]{128})\.(sig|att|sbom)$/;

/** Most layers of one signature manifest read, and bytes of one layer. */
export const MAX_SIGNATURE_LAYERS = 32;
export const MAX_SIGNATURE_LAYER_BYTES = 4 * 1024 * 1024;

/** True for a tag of cosign's attachment scheme (`sha256-<hex>.sig`, `.att`, `.sbom`). */
export function isAttachmentTag(tag: string): boolean {
  return ATTACHMENT_TAG.test(tag);
}

/** The artifact types of signatures and attestations (a pull of one is never refused by a trust policy). */
const SIGNATURE_ARTIFACT_TYPES: ReadonlySet<string> = new Set([
  SIGNATURE_MEDIA_TYPE.cosignArtifact,
  SIGNATURE_MEDIA_TYPE.sigstoreBundle,
  SIGNATURE_MEDIA_TYPE.dsseEnvelope,
  "application/vnd.dev.cosign.artifact.sbom.v1+json",
  "application/vnd.in-toto+json",
  "application/vnd.cncf.notary.signature",
]);

/** True for a manifest of a signature or attestation artifact type. */
export function isSignatureArtifactType(artifactType: string): boolean {
  return SIGNATURE_ARTIFACT_TYPES.has(artifactType);
}

/** One signed layer of a signature manifest, as the `signatures` table keeps it. */
export interface SignatureRecord {
  layer: number;
  /** The image digest the manifest attaches the signature to. */
  subjectDigest: string;
  kind: "simple-signing" | "dsse";
  payload: Buffer;
  payloadType: string;
  /** Base64 signatures over the payload (simple-signing) or its PAE (DSSE). */
  signatures: string[];
}

/**
 * The image a manifest attaches signatures to: its `subject`, else the digest its tag names in
 * cosign's scheme (`sha256-<hex>.sig|.att`); undefined when neither.
 */
export function attachedSubject(manifest: Manifest, tag: string | undefined): string | undefined {
  if (manifest.subject !== undefined) return manifest.subject.digest;
  const match = tag === undefined ? null : ATTACHMENT_TAG.exec(tag);
  return match && match[3] !== "sbom" ? `${match[1]}:${match[2]}` : undefined;
}

/** The layers of `manifest` whose bytes `signatureRecords` needs (by index), when it attaches signatures to `subject`. */
export function signedLayers(manifest: Manifest): Array<{ layer: number; digest: string; size: number }> {
  if (manifest.kind !== "image") return [];
  return manifest.layers
    .slice(0, MAX_SIGNATURE_LAYERS)
    .map((descriptor, layer) => ({ descriptor, layer }))
    .filter(({ descriptor }) => descriptor.size <= MAX_SIGNATURE_LAYER_BYTES)
    .filter(({ descriptor }) => descriptor.mediaType === SIGNATURE_MEDIA_TYPE.dsseEnvelope || (descriptor.mediaType === SIGNATURE_MEDIA_TYPE.simpleSigning && (descriptor.annotations?.[COSIGN_SIGNATURE_ANNOTATION] ?? "") !== ""))
    .map(({ descriptor, layer }) => ({ layer, digest: descriptor.digest, size: descriptor.size }));
}

/**
 * The signature records of a manifest attaching signatures to `subject`, from the bytes of the
 * layers `signedLayers` named (`bytes` by layer index). A layer that is not what its media type
 * says (an envelope that does not parse) is left out.
 */
export function signatureRecords(manifest: Manifest, subject: string, bytes: ReadonlyMap<number, Buffer>): SignatureRecord[] {
  if (manifest.kind !== "image") return [];
  const records: SignatureRecord[] = [];
  for (const [layer, content] of bytes) {
    const descriptor = manifest.layers[layer];
    if (descriptor.mediaType === SIGNATURE_MEDIA_TYPE.simpleSigning) {
      records.push({ layer, subjectDigest: subject, kind: "simple-signing", payload: content, payloadType: "", signatures: [descriptor.annotations?.[COSIGN_SIGNATURE_ANNOTATION] ?? ""] });
    } else {
      const envelope = parseEnvelope(content);
      if (envelope !== undefined) records.push({ layer, subjectDigest: subject, kind: "dsse", ...envelope });
    }
  }
  return records;
}

function parseEnvelope(content: Buffer): Pick<SignatureRecord, "payload" | "payloadType" | "signatures"> | undefined {
  let envelope: unknown;
  try {
    envelope = JSON.parse(content.toString("utf8"));
  } catch {
    return undefined;
  }
  if (typeof envelope !== "object" || envelope === null) return undefined;
  const { payload, payloadType, signatures } = envelope as { payload?: unknown; payloadType?: unknown; signatures?: unknown };
  if (typeof payload !== "string" || typeof payloadType !== "string" || !Array.isArray(signatures)) return undefined;
  const sigs = signatures.map((s: unknown) => (typeof s === "object" && s !== null && typeof (s as { sig?: unknown }).sig === "string" ? (s as { sig: string }).sig : "")).filter((s) => s !== "");
  return { payload: Buffer.from(payload, "base64"), payloadType, signatures: sigs };
}

/** DSSE's pre-authentication encoding of a payload: `DSSEv1 <len> <type> <len> <body>`, what DSSE signs. */
export function preAuthenticationEncoding(payloadType: string, payload: Buffer): Buffer {
  const type = Buffer.from(payloadType, "utf8");
  return Buffer.concat([Buffer.from(`DSSEv1 ${type.length} `), type, Buffer.from(` ${payload.length} `), payload]);
}

/** What a verified record proves of its subject: a signature, or an attestation of a predicate type. */
export type Claim = { kind: "signature" } | { kind: "attestation"; predicateType: string };

/**
 * What the record's payload claims of `subject`, when its content names that digest: a
 * simple-signing payload whose `critical.image.docker-manifest-digest` is it, or an in-toto
 * statement (in a DSSE envelope of type `application/vnd.in-toto+json`) with a subject of that
 * digest. Undefined when the payload names another digest or does not parse. Says nothing of the
 * signature: `verifiesSignature` does.
 */
export function claimOf(record: Pick<SignatureRecord, "kind" | "payload" | "payloadType" | "subjectDigest">): Claim | undefined {
  let json: unknown;
  try {
    json = JSON.parse(record.payload.toString("utf8"));
  } catch {
    return undefined;
  }
  if (typeof json !== "object" || json === null) return undefined;
  if (record.kind === "simple-signing") {
    const critical = (json as { critical?: { image?: { "docker-manifest-digest"?: unknown } } }).critical;
    return critical?.image?.["docker-manifest-digest"] === record.subjectDigest ? { kind: "signature" } : undefined;
  }
  if (record.payloadType !== "application/vnd.in-toto+json") return undefined;
  const statement = json as { _type?: unknown; subject?: unknown; predicateType?: unknown };
  if (typeof statement._type !== "string" || !statement._type.startsWith("https://in-toto.io/Statement/")) return undefined;
  if (typeof statement.predicateType !== "string" || !Array.isArray(statement.subject)) return undefined;
  const [algorithm, hex] = record.subjectDigest.split(":");
  const names = statement.subject.some((s: unknown) => typeof s === "object" && s !== null && (s as { digest?: Record<string, unknown> }).digest?.[algorithm] === hex);
  return names ? { kind: "attestation", predicateType: statement.predicateType } : undefined;
}
