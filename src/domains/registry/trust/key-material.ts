import { constants, createHash, createPublicKey, verify, type KeyObject } from "node:crypto";

/**
 * Public keys a group trusts, read from PEM with node:crypto, and signature checks over bytes.
 * Pure: no storage. Nothing here implements a primitive; node:crypto verifies.
 */

/** The algorithms a trusted key may have (`TrustedKey.algorithm`). */
export type KeyAlgorithm = "ecdsa-p256" | "ecdsa-p384" | "ed25519" | "rsa";

/** Smallest RSA modulus accepted, bits. */
export const MIN_RSA_BITS = 2048;
/** Longest PEM accepted, characters. */
export const MAX_PEM_LENGTH = 16_384;

export interface PublicKey {
  algorithm: KeyAlgorithm;
  /** `sha256:<hex>` of the DER SubjectPublicKeyInfo. */
  fingerprint: string;
  key: KeyObject;
}

/** The PEM is not a public key this server trusts; `message` says why (a field violation's description). */
export class UnsupportedKey extends Error {}

/**
 * The public key of a PEM SubjectPublicKeyInfo (`-----BEGIN PUBLIC KEY-----`), or of an
 * `RSA PUBLIC KEY`. Throws UnsupportedKey for text that does not parse, a private key, or a key
 * other than ECDSA P-256/P-384, Ed25519 and RSA of at least MIN_RSA_BITS.
 */
export function parsePublicKeyPem(pem: string): PublicKey {
  if (pem.length > MAX_PEM_LENGTH) throw new UnsupportedKey(`must be at most ${MAX_PEM_LENGTH} characters`);
  if (!/-----BEGIN (RSA )?PUBLIC KEY-----/.test(pem)) throw new UnsupportedKey("must be a PEM public key (-----BEGIN PUBLIC KEY-----)");
  let key: KeyObject;
  try {
    key = createPublicKey({ key: pem, format: "pem" });
  } catch {
    throw new UnsupportedKey("is not a PEM public key that parses");
  }
  const algorithm = algorithmOf(key);
  const der = key.export({ type: "spki", format: "der" });
  return { algorithm, fingerprint: `sha256:${createHash("sha256").update(der).digest("hex")}`, key };
}

function algorithmOf(key: KeyObject): KeyAlgorithm {
  const details = key.asymmetricKeyDetails ?? {};
  switch (key.asymmetricKeyType) {
    case "ec":
      if (details.namedCurve === "prime256v1") return "ecdsa-p256";
      if (details.namedCurve === "secp384r1") return "ecdsa-p384";
      throw new UnsupportedKey(`holds an ECDSA key on ${details.namedCurve ?? "an unknown curve"}: only P-256 and P-384 are accepted`);
    case "ed25519":
      return "ed25519";
    case "rsa":
      if ((details.modulusLength ?? 0) < MIN_RSA_BITS) throw new UnsupportedKey(`holds an RSA key of ${details.modulusLength} bits: at least ${MIN_RSA_BITS} are needed`);
      return "rsa";
    default:
      throw new UnsupportedKey(`holds a ${key.asymmetricKeyType ?? "unknown"} key: ECDSA P-256/P-384, Ed25519 and RSA are accepted`);
  }
}

/**
 * True when `signature` is a signature of `data` by `key` as cosign and DSSE signers make them:
 * ECDSA (DER) over SHA-256 (P-256) or SHA-384 (P-384), Ed25519 over the bytes, RSA PKCS#1 v1.5 or
 * PSS over SHA-256. Never throws for a malformed signature: false.
 */
export function verifiesSignature(key: PublicKey, data: Buffer, signature: Buffer): boolean {
  try {
    switch (key.algorithm) {
      case "ecdsa-p256":
        return verify("sha256", data, key.key, signature);
      case "ecdsa-p384":
        return verify("sha384", data, key.key, signature) || verify("sha256", data, key.key, signature);
      case "ed25519":
        return verify(null, data, key.key, signature);
      case "rsa":
        return verify("sha256", data, key.key, signature) || verify("sha256", data, { key: key.key, padding: constants.RSA_PKCS1_PSS_PADDING }, signature);
    }
  } catch {
    return false;
  }
}
