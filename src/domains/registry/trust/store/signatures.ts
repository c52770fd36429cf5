import type { Insertable, Selectable } from "kysely";
import { selfAndAncestors, subtreeRange } from "../../../../aip/uidp.js";
import type { Db } from "../../../kit/schema.js";
import type { SignatureTable, SignatureVerificationTable } from "../tables.js";

export type SignatureRow = Selectable<SignatureTable>;
export type VerificationRow = Insertable<SignatureVerificationTable>;

/** Stores the signatures read from one signature manifest; those already stored stay. */
export async function insertSignatures(db: Db, rows: Insertable<SignatureTable>[]): Promise<void> {
  if (rows.length === 0) return;
  await db.insertInto("signatures").values(rows).onConflict((oc) => oc.columns(["repo_uid", "manifest_digest", "layer"]).doNothing()).execute();
}

/** Records verifications; those already recorded stay. */
export async function insertVerifications(db: Db, rows: VerificationRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db.insertInto("signature_verifications").values(rows).onConflict((oc) => oc.columns(["repo_uid", "manifest_digest", "layer", "key_uid"]).doNothing()).execute();
}

/**
 * Up to `limit` signatures of the repos at or below group `group`, in (repo, manifest, layer)
 * order after `after`: what a new key is checked against.
 */
export async function signaturesBelow(db: Db, group: string, limit: number, after?: Pick<SignatureRow, "repo_uid" | "manifest_digest" | "layer">): Promise<SignatureRow[]> {
  const { low, high } = subtreeRange(group);
  let query = db
    .selectFrom("signatures")
    .innerJoin("repos", "repos.uid", "signatures.repo_uid")
    .selectAll("signatures")
    .where("repos.group_uid", ">=", low)
    .where("repos.group_uid", "<", high);
  if (after !== undefined) {
    query = query.where((eb) =>
      eb.or([
        eb("signatures.repo_uid", ">", after.repo_uid),
        eb.and([eb("signatures.repo_uid", "=", after.repo_uid), eb("signatures.manifest_digest", ">", after.manifest_digest)]),
        eb.and([eb("signatures.repo_uid", "=", after.repo_uid), eb("signatures.manifest_digest", "=", after.manifest_digest), eb("signatures.layer", ">", after.layer)]),
      ]),
    );
  }
  const rows = await query.orderBy("signatures.repo_uid").orderBy("signatures.manifest_digest").orderBy("signatures.layer").limit(limit).execute();
  return rows.map((row) => ({ ...row, layer: Number(row.layer), create_time: Number(row.create_time), payload: Buffer.from(row.payload) }));
}

/** True when the repo holds a signature manifest `digest` (one the registry read signatures from). */
export async function isSignatureManifest(db: Db, repoUid: string, digest: string): Promise<boolean> {
  const row = await db.selectFrom("signatures").select("layer").where("repo_uid", "=", repoUid).where("manifest_digest", "=", digest).limit(1).executeTakeFirst();
  return row !== undefined;
}

/** What trusted keys verified of some digests of a repo. */
export interface Verified {
  /** The subject digest verified. */
  digest: string;
  keyUid: string;
  kind: string;
  predicateType: string;
}

/**
 * The verifications of `digests` of a repo of group `group` that still hold: by a key of the group
 * or a group above it, from a signature manifest the repo still holds. By digest, then key.
 */
export async function verificationsOf(db: Db, repo: { uid: string; group_uid: string }, digests: string[]): Promise<Verified[]> {
  if (digests.length === 0) return [];
  const rows = await db
    .selectFrom("signature_verifications")
    .innerJoin("trusted_keys", "trusted_keys.uid", "signature_verifications.key_uid")
    .innerJoin("manifests", (join) => join.onRef("manifests.repo_uid", "=", "signature_verifications.repo_uid").onRef("manifests.digest", "=", "signature_verifications.manifest_digest"))
    .select(["signature_verifications.subject_digest", "signature_verifications.key_uid", "signature_verifications.kind", "signature_verifications.predicate_type"])
    .where("signature_verifications.repo_uid", "=", repo.uid)
    .where("signature_verifications.subject_digest", "in", digests)
    .where("trusted_keys.group_uid", "in", selfAndAncestors(repo.group_uid))
    .orderBy("signature_verifications.subject_digest")
    .orderBy("signature_verifications.key_uid")
    .execute();
  return rows.map((row) => ({ digest: row.subject_digest, keyUid: row.key_uid, kind: row.kind, predicateType: row.predicate_type }));
}

/** The indexes of the repo that name manifest `digest`. */
export async function indexesNaming(db: Db, repoUid: string, digest: string): Promise<string[]> {
  const rows = await db.selectFrom("manifest_refs").select("parent_digest").where("repo_uid", "=", repoUid).where("child_digest", "=", digest).execute();
  return rows.map((row) => row.parent_digest);
}

/** The in-toto predicate types of SBOM attestations: SPDX 2.x JSON, CycloneDX JSON. */
export const SBOM_PREDICATE_TYPES = ["https://spdx.dev/Document", "https://cyclonedx.org/bom"];

/** A verified SBOM attestation of an image: the in-toto statement and the key that verified it. */
export interface VerifiedSbom {
  keyName: string;
  predicateType: string;
  /** The in-toto statement (the DSSE envelope's payload), JSON. */
  statement: Buffer;
  manifestDigest: string;
}

/**
 * The SBOM attestations of image `digest` of a repo that a key trusted at the repo's group still
 * verifies (the signature manifest still held), oldest verification first, then by key name.
 */
export async function verifiedSbomsOf(db: Db, repo: { uid: string; group_uid: string }, digest: string): Promise<VerifiedSbom[]> {
  const rows = await db
    .selectFrom("signature_verifications as v")
    .innerJoin("trusted_keys", "trusted_keys.uid", "v.key_uid")
    .innerJoin("manifests", (join) => join.onRef("manifests.repo_uid", "=", "v.repo_uid").onRef("manifests.digest", "=", "v.manifest_digest"))
    .innerJoin("signatures", (join) => join.onRef("signatures.repo_uid", "=", "v.repo_uid").onRef("signatures.manifest_digest", "=", "v.manifest_digest").onRef("signatures.layer", "=", "v.layer"))
    .select(["trusted_keys.name", "v.predicate_type", "signatures.payload", "v.manifest_digest"])
    .where("v.repo_uid", "=", repo.uid)
    .where("v.subject_digest", "=", digest)
    .where("v.kind", "=", "attestation")
    .where("v.predicate_type", "in", SBOM_PREDICATE_TYPES)
    .where("trusted_keys.group_uid", "in", selfAndAncestors(repo.group_uid))
    .orderBy("v.verify_time")
    .orderBy("trusted_keys.name")
    .orderBy("v.manifest_digest")
    .orderBy("v.layer")
    .execute();
  return rows.map((row) => ({ keyName: row.name, predicateType: row.predicate_type, statement: Buffer.from(row.payload), manifestDigest: row.manifest_digest }));
}
