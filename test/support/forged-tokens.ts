import { importJWK, SignJWT, type JWK, type JWTPayload } from "jose";
import { listSigningKeys } from "../../src/store/server-keys.js";
import type { Db } from "../../src/domains/kit/schema.js";

/**
 * Signs `claims` with the server's own current signing key, read from its store: tokens the
 * server never issues (too long-lived, issued in the future), with a valid signature.
 */
export async function signWithServerKey(db: Db, claims: JWTPayload): Promise<string> {
  const [row] = await listSigningKeys(db);
  const key = await importJWK(JSON.parse(row.private_jwk) as JWK, row.algorithm);
  return new SignJWT(claims).setProtectedHeader({ alg: row.algorithm, kid: row.kid, typ: "JWT" }).sign(key);
}
