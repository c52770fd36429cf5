import type { Db } from "../../kit/schema.js";
import { matchesTagPattern } from "../immutable-tags.js";
import { isDigestReference } from "../names.js";
import type { ManifestRow } from "../store/manifests.js";
import type { RepoRow } from "../store/repos.js";
import { isAttachmentTag, isSignatureArtifactType } from "./signature-formats.js";
import { indexesNaming, isSignatureManifest, verificationsOf } from "./store/signatures.js";
import { effectiveTrustPolicy, exemptReposOf, type TrustMode } from "./store/trust-policies.js";

/**
 * What a repo's trust policy says of a pull (docs/decisions.md, "Supply-chain trust"): a lookup
 * of what was verified at push or key creation, never a verification. Under a policy `off` (or
 * none) it reads one small row; otherwise at most four indexed reads.
 */
export type PullTrust =
  | { verdict: "allowed" }
  /** The manifest is unverified and the policy set at `policyGroup` says `mode` (warn or enforce). */
  | { verdict: "unverified"; mode: Exclude<TrustMode, "off">; policyGroup: string };

const ALLOWED: PullTrust = { verdict: "allowed" };

/**
 * The verdict on a pull of `manifest` of the repo by `reference` (a tag or its digest). Allowed:
 * under no policy or `off`; for a repo an exempt pattern matches; for a signature or attestation
 * artifact (a cosign attachment tag, a manifest with a subject or of a signature artifact type,
 * one the registry read signatures from); for a manifest a trusted key of the repo verified, or
 * that an index of the repo so verified names.
 */
export async function pullTrust(db: Db, repo: RepoRow, manifest: Pick<ManifestRow, "digest" | "subject_digest" | "artifact_type">, reference: string): Promise<PullTrust> {
  const policy = await effectiveTrustPolicy(db, repo.group_uid);
  if (policy === undefined || policy.mode === "off") return ALLOWED;
  if (exemptReposOf(policy).some((pattern) => matchesTagPattern(pattern, repo.name))) return ALLOWED;
  if (!isDigestReference(reference) && isAttachmentTag(reference)) return ALLOWED;
  if (manifest.subject_digest !== "" || isSignatureArtifactType(manifest.artifact_type)) return ALLOWED;
  const candidates = [manifest.digest, ...(await indexesNaming(db, repo.uid, manifest.digest))];
  const verified = await verificationsOf(db, repo, candidates);
  if (verified.some((v) => v.kind === "signature")) return ALLOWED;
  if (await isSignatureManifest(db, repo.uid, manifest.digest)) return ALLOWED;
  return { verdict: "unverified", mode: policy.mode as Exclude<TrustMode, "off">, policyGroup: policy.group_uid };
}
