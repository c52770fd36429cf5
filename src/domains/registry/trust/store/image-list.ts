import type { ExpressionBuilder } from "kysely";
import type { Page } from "../../../../aip/pagination.js";
import { selfAndAncestors } from "../../../../aip/uidp.js";
import type { Database, Db } from "../../../kit/schema.js";
import type { RepoRow } from "../../store/repos.js";
import { verificationsOf } from "./signatures.js";

/** One image of a ListImages page: a manifest of the repo (its digest as `uid`, the list kit's key) and what verified it. */
export interface ImageListRow {
  uid: string;
  media_type: string;
  artifact_type: string;
  create_time: number;
  /** Trusted keys whose signature of the digest holds, by uid. */
  verified_by: string[];
  /** Predicate types of the attestations of the digest a trusted key verified, sorted, distinct. */
  attestations: string[];
}

/** Which images ListImages answers: those a key (`*`: any trusted key) verified, those none did, one digest. */
export interface ImageFilter {
  verifiedBy?: string;
  unverified?: boolean;
  digest?: string;
}

/** The digests of the repo a trusted key of it verified a signature of (`key`: that key only), as a subquery. */
function verifiedDigests(eb: ExpressionBuilder<Database, "manifests">, repo: RepoRow, key: string | undefined) {
  let query = eb
    .selectFrom("signature_verifications")
    .innerJoin("trusted_keys", "trusted_keys.uid", "signature_verifications.key_uid")
    .innerJoin("manifests as signature", (join) =>
      join.onRef("signature.repo_uid", "=", "signature_verifications.repo_uid").onRef("signature.digest", "=", "signature_verifications.manifest_digest"),
    )
    .select("signature_verifications.subject_digest")
    .where("signature_verifications.repo_uid", "=", repo.uid)
    .where("signature_verifications.kind", "=", "signature")
    .where("trusted_keys.group_uid", "in", selfAndAncestors(repo.group_uid));
  if (key !== undefined && key !== "*") query = query.where("signature_verifications.key_uid", "=", key);
  return query;
}

/**
 * One page of the repo's manifests in digest order (up to `limit + 1` rows after `page.after`,
 * `page.skip` skipped) matching `filter`, with what verified each, and the count of all matches.
 */
export async function listImages(db: Db, repo: RepoRow, filter: ImageFilter, page: Page): Promise<{ rows: ImageListRow[]; total: number }> {
  const base = () => {
    let query = db.selectFrom("manifests").where("manifests.repo_uid", "=", repo.uid);
    if (filter.digest !== undefined) query = query.where("manifests.digest", "=", filter.digest);
    if (filter.verifiedBy !== undefined) query = query.where((eb) => eb("manifests.digest", "in", verifiedDigests(eb, repo, filter.verifiedBy)));
    if (filter.unverified) query = query.where((eb) => eb.not(eb("manifests.digest", "in", verifiedDigests(eb, repo, undefined))));
    return query;
  };
  const after = page.after?.[0];
  let query = base().select(["manifests.digest", "manifests.media_type", "manifests.artifact_type", "manifests.create_time"]);
  if (after !== undefined) query = query.where("manifests.digest", ">", String(after));
  const rows = await query.orderBy("manifests.digest").offset(page.skip).limit(page.limit + 1).execute();
  const total = page.total ?? Number((await base().select((eb) => eb.fn.countAll().as("n")).executeTakeFirstOrThrow()).n);
  const verified = await verificationsOf(db, repo, rows.map((row) => row.digest));
  return {
    total,
    rows: rows.map((row) => {
      const own = verified.filter((v) => v.digest === row.digest);
      return {
        uid: row.digest,
        media_type: row.media_type,
        artifact_type: row.artifact_type,
        create_time: Number(row.create_time),
        verified_by: [...new Set(own.filter((v) => v.kind === "signature").map((v) => v.keyUid))].sort(),
        attestations: [...new Set(own.filter((v) => v.kind === "attestation").map((v) => v.predicateType))].sort(),
      };
    }),
  };
}
