import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

/**
 * Secrets kept at rest (an identity provider's client secret): AES-256-GCM under a key derived
 * from the server's `secrets-key` (in `server_secrets`, as the page-token key is), stored as
 * `sealed:v1:` + base64url(12-byte nonce | ciphertext | 16-byte tag). A value without the prefix
 * (written before sealing existed, or empty) opens as itself.
 */
export interface SecretBox {
  seal(plain: string): string;
  /** Throws SealedSecretError when the value was sealed under another key or altered. */
  open(stored: string): string;
}

export class SealedSecretError extends Error {}

const PREFIX = "sealed:v1:";
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** The name of the server secret the box's key is derived from. */
export const SECRETS_KEY_NAME = "secrets-key";

export function createSecretBox(secret: Uint8Array): SecretBox {
  const key = Buffer.from(hkdfSync("sha256", secret, Buffer.alloc(0), "platform-api secrets at rest v1", 32));
  return {
    seal(plain) {
      if (plain === "") return "";
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      const sealed = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
      return PREFIX + Buffer.concat([iv, sealed, cipher.getAuthTag()]).toString("base64url");
    },
    open(stored) {
      if (!stored.startsWith(PREFIX)) return stored;
      const bytes = Buffer.from(stored.slice(PREFIX.length), "base64url");
      if (bytes.length < IV_BYTES + TAG_BYTES) throw new SealedSecretError("a sealed secret is truncated");
      try {
        const decipher = createDecipheriv("aes-256-gcm", key, bytes.subarray(0, IV_BYTES));
        decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
        return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()]).toString("utf8");
      } catch {
        throw new SealedSecretError("a sealed secret does not open with this server's secrets key");
      }
    },
  };
}

/** Whether a stored value is sealed (or empty): what a migration checks before sealing it. */
export function isSealed(stored: string): boolean {
  return stored === "" || stored.startsWith(PREFIX);
}

/** A new secrets key, as `server_secrets` holds it. */
export function newSecretsKey(): string {
  return randomBytes(32).toString("base64url");
}
