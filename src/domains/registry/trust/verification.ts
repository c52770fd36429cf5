import type { Kysely } from "kysely";
import type { Database, Db } from "../../kit/schema.js";
import type { ContentStore } from "../content/content-store.js";
import type { Manifest } from "../manifest.js";
import { linkedBlobSize } from "../store/blobs.js";
import { parsePublicKeyPem, verifiesSignature, type PublicKey } from "./key-material.js";
import { attachedSubject, claimOf, preAuthenticationEncoding, signatureRecords, signedLayers, type SignatureRecord } from "./signature-formats.js";
import { isInventoried } from "../image-inventory.js";
import { parseManifest } from "../manifest.js";
import { ensureReport } from "../store/image-reports.js";
import { findManifest } from "../store/manifests.js";
import { enqueueReportJob } from "../store/report-jobs.js";
import { insertSignatures, insertVerifications, SBOM_PREDICATE_TYPES, signaturesBelow, type VerificationRow } from "./store/signatures.js";
import { keysTrustedAt, type TrustedKeyRow } from "./store/trusted-keys.js";

/**
 * Verification, done when a signature arrives (a push of a signature manifest) and when a key
 * is created, never at pull: a pull reads what was recorded (`trust/pull-policy.ts`).
 */

/** Signatures a new key is checked against per read. */
const PAGE = 200;

type Stored = Pick<SignatureRecord, "kind" | "payload" | "payloadType" | "subjectDigest"> & { repo_uid: string; manifest_digest: string; layer: number; signatures: string[] };

/** The keys of `rows` that carry key material (keyless identities verify nothing yet), parsed. */
function usableKeys(rows: TrustedKeyRow[]): Array<{ uid: string; key: PublicKey }> {
  return rows.filter((row) => row.public_key_pem !== "").map((row) => ({ uid: row.uid, key: parsePublicKeyPem(row.public_key_pem) }));
}

/**
 * The verifications of one stored signature by `keys`: one row per key whose signature over the
 * payload (DSSE: over its PAE) checks, when the payload names the signature's subject digest.
 */
function verifyOne(signature: Stored, keys: Array<{ uid: string; key: PublicKey }>, now: number): VerificationRow[] {
  const claim = claimOf(signature);
  if (claim === undefined) return [];
  const signed = signature.kind === "dsse" ? preAuthenticationEncoding(signature.payloadType, signature.payload) : signature.payload;
  const sigs = signature.signatures.map((s) => Buffer.from(s, "base64"));
  return keys
    .filter(({ key }) => sigs.some((sig) => verifiesSignature(key, signed, sig)))
    .map(({ uid }) => ({
      repo_uid: signature.repo_uid,
      manifest_digest: signature.manifest_digest,
      layer: signature.layer,
      key_uid: uid,
      subject_digest: signature.subjectDigest,
      kind: claim.kind,
      predicate_type: claim.kind === "attestation" ? claim.predicateType : "",
      verify_time: now,
    }));
}

async function readLayer(content: ContentStore, digest: string): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of content.read(digest)) chunks.push(chunk as Buffer);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  return Buffer.concat(chunks);
}

/**
 * The signatures a pushed manifest attaches to an image (none for a manifest that attaches
 * nothing), its signed layers read from the repo's blobs before the push's transaction. A layer
 * the repo does not hold is left out (the push is refused for it anyway).
 */
export async function readPushedSignatures(db: Kysely<Database>, content: ContentStore, repoUid: string, manifest: Manifest, tag: string | undefined): Promise<{ subject: string; records: SignatureRecord[] } | undefined> {
  const subject = attachedSubject(manifest, tag);
  if (subject === undefined) return undefined;
  const bytes = new Map<number, Buffer>();
  for (const { layer, digest, size } of signedLayers(manifest)) {
    if ((await linkedBlobSize(db, repoUid, digest)) !== size) continue;
    const read = await readLayer(content, digest);
    if (read !== undefined) bytes.set(layer, read);
  }
  return { subject, records: signatureRecords(manifest, subject, bytes) };
}

/**
 * Stores the signatures of signature manifest `manifestDigest` of the repo and verifies them with
 * the keys the repo trusts (its group's and those above), in the push's transaction.
 */
export async function recordPushedSignatures(trx: Db, repo: { uid: string; group_uid: string }, manifestDigest: string, records: SignatureRecord[], now: number): Promise<void> {
  if (records.length === 0) return;
  await insertSignatures(
    trx,
    records.map((r) => ({ repo_uid: repo.uid, manifest_digest: manifestDigest, layer: r.layer, subject_digest: r.subjectDigest, kind: r.kind, payload: r.payload, payload_type: r.payloadType, signatures: JSON.stringify(r.signatures), create_time: now })),
  );
  const keys = usableKeys(await keysTrustedAt(trx, repo.group_uid));
  if (keys.length === 0) return;
  const rows = records.flatMap((r) => verifyOne({ ...r, repo_uid: repo.uid, manifest_digest: manifestDigest }, keys, now));
  await insertVerifications(trx, rows);
}

/**
 * Queues the inventory again of the images an SBOM attestation in `rows` was just verified for:
 * their reports now read the attestation instead of the layers (image-inventory.ts,
 * `attestedInventory`).
 */
async function requeueAttested(trx: Db, rows: readonly VerificationRow[], now: number): Promise<void> {
  const images = new Map<string, { repoUid: string; digest: string }>();
  for (const row of rows) {
    if (row.kind === "attestation" && SBOM_PREDICATE_TYPES.includes(row.predicate_type)) images.set(`${row.repo_uid}\0${row.subject_digest}`, { repoUid: row.repo_uid, digest: row.subject_digest });
  }
  for (const { repoUid, digest } of images.values()) {
    const image = await findManifest(trx, repoUid, digest);
    if (image === undefined || !isInventoried(parseManifest(image.content, image.media_type))) continue;
    await ensureReport(trx, digest, now);
    await enqueueReportJob(trx, { digest, repoUid, kind: "inventory" }, now);
  }
}

/**
 * Verifies every signature stored in the repos at or below the key's group with the key, in the
 * transaction that creates it, a page at a time; answers how many it verified.
 */
export async function verifyWithNewKey(trx: Db, key: TrustedKeyRow, now: number): Promise<number> {
  const keys = usableKeys([key]);
  if (keys.length === 0) return 0;
  let verified = 0;
  let after: { repo_uid: string; manifest_digest: string; layer: number } | undefined;
  for (;;) {
    const page = await signaturesBelow(trx, key.group_uid, PAGE, after);
    const rows = page.flatMap((s) =>
      verifyOne({ ...s, subjectDigest: s.subject_digest, payloadType: s.payload_type, kind: s.kind as SignatureRecord["kind"], signatures: JSON.parse(s.signatures) as string[] }, keys, now),
    );
    await insertVerifications(trx, rows);
    await requeueAttested(trx, rows, now);
    verified += rows.length;
    if (page.length < PAGE) return verified;
    after = page[page.length - 1];
  }
}
