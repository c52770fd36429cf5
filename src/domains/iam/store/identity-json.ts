import type { StoredClaimMatch, StoredStaticKeys } from "./identities.js";

/**
 * The one reader of the JSON columns `identities.claim_match` and `identities.static_keys`:
 * checked, with empty values left out. The Identities service and the token exchange both
 * read through it.
 */

/** A stored JSON column that does not have its documented shape. */
export class StoredJsonError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StoredJsonError";
  }
}

const isString = (v: unknown): v is string => typeof v === "string";
const isStringMap = (v: unknown): v is Record<string, string> =>
  typeof v === "object" && v !== null && !Array.isArray(v) && Object.values(v).every(isString);

/** Parses an identity's `claim_match` column; undefined for "" and throws StoredJsonError for a malformed one. */
export function readClaimMatch(json: string): StoredClaimMatch | undefined {
  if (json === "") return undefined;
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw new StoredJsonError("the identity's claim_match is not JSON");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new StoredJsonError("the identity's claim_match is not an object");
  const v = value as Record<string, unknown>;
  for (const key of ["issuer", "issuerPattern", "subject", "subjectPattern", "audience", "audiencePattern"]) {
    if (v[key] !== undefined && v[key] !== null && !isString(v[key])) throw new StoredJsonError(`the identity's claim_match.${key} is not a string`);
  }
  for (const key of ["claims", "claimPatterns"]) {
    if (v[key] !== undefined && v[key] !== null && !isStringMap(v[key])) throw new StoredJsonError(`the identity's claim_match.${key} is not a map of strings`);
  }
  // Empty strings and null mean "not set", as proto3 JSON would write them.
  const str = (key: string) => (isString(v[key]) && v[key] !== "" ? (v[key] as string) : undefined);
  const map = (key: string) => (isStringMap(v[key]) && Object.keys(v[key] as object).length > 0 ? (v[key] as Record<string, string>) : undefined);
  const out: StoredClaimMatch = {
    issuer: str("issuer"),
    issuerPattern: str("issuerPattern"),
    subject: str("subject"),
    subjectPattern: str("subjectPattern"),
    audience: str("audience"),
    audiencePattern: str("audiencePattern"),
    claims: map("claims"),
    claimPatterns: map("claimPatterns"),
  };
  for (const key of Object.keys(out) as (keyof StoredClaimMatch)[]) if (out[key] === undefined) delete out[key];
  return out;
}

/** Parses an identity's `static_keys` column; undefined for "" and throws StoredJsonError for a malformed one. */
export function readStaticKeys(json: string): StoredStaticKeys | undefined {
  if (json === "") return undefined;
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw new StoredJsonError("the identity's static_keys is not JSON");
  }
  const v = value as Partial<Record<keyof StoredStaticKeys, unknown>> | null;
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw new StoredJsonError("the identity's static_keys is not an object");
  if (!isString(v.issuer) || v.issuer === "" || !isString(v.subject) || v.subject === "") {
    throw new StoredJsonError("the identity's static_keys needs an issuer and a subject");
  }
  const keys = v.issuerKeys as { keys?: unknown } | undefined;
  if (typeof keys !== "object" || keys === null || !Array.isArray(keys.keys)) throw new StoredJsonError("the identity's static_keys.issuerKeys is not a JWKS");
  const expiration = v.expirationTime;
  if (expiration !== undefined && expiration !== null && (typeof expiration !== "number" || !Number.isFinite(expiration))) {
    throw new StoredJsonError("the identity's static_keys.expirationTime is not a number");
  }
  return {
    issuer: v.issuer,
    subject: v.subject,
    issuerKeys: keys as StoredStaticKeys["issuerKeys"],
    ...(typeof expiration === "number" ? { expirationTime: expiration } : {}),
  };
}
