/**
 * The tables of supply-chain trust (docs/decisions.md, "Supply-chain trust"): the keys groups
 * trust, the groups' trust policies, the signatures read from pushed signature manifests, and
 * which trusted key verified which of them. Column conventions in src/store/tables.ts.
 */

/** A public key (or a keyless identity) a group trusts for the repos at or below it. */
export interface TrustedKeyTable {
  /** A UIDP under `group_uid`. */
  uid: string;
  group_uid: string;
  /** Unique in the group. */
  name: string;
  description: string;
  /** PEM SubjectPublicKeyInfo; "" for a keyless identity. */
  public_key_pem: string;
  /** `ecdsa-p256`, `ecdsa-p384`, `ed25519`, `rsa` or `keyless`. */
  algorithm: string;
  /** `sha256:<hex>` of the DER SubjectPublicKeyInfo; "" for a keyless identity. Unique in the group when set. */
  fingerprint: string;
  keyless_issuer: string;
  keyless_subject: string;
  create_time: number;
  update_time: number;
}

/** The trust policy set at a group (one row per group that set one). */
export interface TrustPolicyTable {
  group_uid: string;
  /** `off`, `warn` or `enforce`. */
  mode: string;
  /** Repo name patterns the policy does not apply to: a JSON array of strings. */
  exempt_repos: string;
  update_time: number;
}

/**
 * One signature read from a signature manifest a repo holds (a layer of it): what was signed and
 * the signature, kept so that a key created later verifies it without reading blobs again.
 */
export interface SignatureTable {
  repo_uid: string;
  /** The signature manifest (a `.sig`/`.att` tag's manifest, or a referrer). */
  manifest_digest: string;
  /** The layer's index in that manifest. */
  layer: number;
  /** The image digest the signature claims (the tag's, or the referrer's subject). */
  subject_digest: string;
  /** `simple-signing` (cosign's payload, signed as is) or `dsse` (an envelope, signed over its PAE). */
  kind: string;
  /** The signed payload: the simple-signing JSON, or the DSSE envelope's decoded payload. */
  payload: Buffer;
  /** For `dsse`, the envelope's payloadType; "" otherwise. */
  payload_type: string;
  /** The signatures over it (base64), a JSON array of strings. */
  signatures: string;
  create_time: number;
}

/** A trusted key verified a signature (a row of `signatures`) for the digest it claims. */
export interface SignatureVerificationTable {
  repo_uid: string;
  manifest_digest: string;
  layer: number;
  key_uid: string;
  /** The image digest verified. */
  subject_digest: string;
  /** `signature` or `attestation`. */
  kind: string;
  /** An attestation's in-toto predicate type; "" for a signature. */
  predicate_type: string;
  verify_time: number;
}

export interface TrustTables {
  trusted_keys: TrustedKeyTable;
  trust_policies: TrustPolicyTable;
  signatures: SignatureTable;
  signature_verifications: SignatureVerificationTable;
}
