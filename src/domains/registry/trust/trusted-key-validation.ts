import type { TrustedKey } from "../../../../gen/platform/registry/v2/trusted_key_pb.js";
import type { Violations } from "../../../aip/validation.js";
import { parsePublicKeyPem, UnsupportedKey, type PublicKey } from "./key-material.js";

/** The fields UpdateTrustedKey may change. */
export const TRUSTED_KEY_UPDATABLE = ["name", "description"];

/** A key's name: lowercase letters, digits, `.`, `_`, `-`, starting with a letter or digit, 1 to 63 characters. */
const KEY_NAME = /^[a-z0-9][a-z0-9._-]{0,62}$/;
/** A keyless subject pattern: printable, no spaces, at most 256 characters. */
const SUBJECT_PATTERN = /^[\x21-\x7e]{1,256}$/;

/** Adds a violation for each of a key's name and description out of its rules. */
export function checkTrustedKeyNames(violations: Violations, key: TrustedKey, prefix = "trusted_key."): void {
  violations.text(`${prefix}name`, key.name, { required: true, max: 63, pattern: KEY_NAME });
  violations.description(`${prefix}description`, key.description);
}

/**
 * Adds the violations of a new key (names, and its key material: a PEM that parses to a supported
 * key, or a keyless identity, exactly one); answers the parsed public key, when it has one.
 */
export function checkNewTrustedKey(violations: Violations, key: TrustedKey, prefix = "trusted_key."): PublicKey | undefined {
  checkTrustedKeyNames(violations, key, prefix);
  const pemField = `${prefix}public_key_pem`;
  if (key.publicKeyPem !== "" && key.keyless !== undefined) {
    violations.add(pemField, "must be empty when `keyless` is set: a key is a public key or a keyless identity");
    return undefined;
  }
  if (key.keyless !== undefined) {
    const issuer = key.keyless.issuer;
    if (!/^https:\/\/[^\s]{1,512}$/.test(issuer) || !URL.canParse(issuer)) violations.add(`${prefix}keyless.issuer`, "must be an https:// URL");
    if (!SUBJECT_PATTERN.test(key.keyless.subjectPattern)) violations.add(`${prefix}keyless.subject_pattern`, "must be 1 to 256 printable characters without spaces (`*`: any run of characters)");
    return undefined;
  }
  if (key.publicKeyPem === "") {
    violations.add(pemField, "is required (or `keyless`)");
    return undefined;
  }
  try {
    return parsePublicKeyPem(key.publicKeyPem);
  } catch (error) {
    if (error instanceof UnsupportedKey) {
      violations.add(pemField, error.message);
      return undefined;
    }
    throw error;
  }
}
