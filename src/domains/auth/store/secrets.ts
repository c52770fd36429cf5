import { createHash, randomBytes } from "node:crypto";

/** A secret handed to a client (a code, a device code, a refresh token): 256 random bits. */
export function newSecret(): string {
  return randomBytes(32).toString("base64url");
}

/** What is stored of a secret handed out: its SHA-256, hex. */
export function secretHash(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

/** RFC 8628 6.1: a user code of 8 letters without vowels (no words, nothing mistaken for a digit), shown as XXXX-XXXX. */
const USER_CODE_LETTERS = "BCDFGHJKLMNPQRSTVWXZ";

export function newUserCode(): string {
  const bytes = randomBytes(8);
  const letters = [...bytes].map((b) => USER_CODE_LETTERS[b % USER_CODE_LETTERS.length]).join("");
  return `${letters.slice(0, 4)}-${letters.slice(4)}`;
}

/** A user code as typed (any case, with or without the dash or spaces) in its stored form. */
export function normalizeUserCode(typed: string): string {
  const letters = typed.toUpperCase().replace(/[^A-Z]/g, "");
  return letters.length === 8 ? `${letters.slice(0, 4)}-${letters.slice(4)}` : "";
}
