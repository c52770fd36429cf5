import { createHash, randomBytes } from "node:crypto";

/** A PKCE pair (RFC 7636): a verifier of 32 random bytes, base64url, and its S256 challenge. */
export function createPkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

/** An unguessable `state` (16 random bytes, base64url). */
export const randomState = (): string => randomBytes(16).toString("base64url");
