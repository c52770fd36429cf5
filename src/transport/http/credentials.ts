/** The token of an `Authorization: Bearer <token>` header, or undefined for any other value or none. */
export function bearerToken(header: string | string[] | null | undefined): string | undefined {
  if (typeof header !== "string") return undefined;
  return /^Bearer\s+(\S+)$/i.exec(header.trim())?.[1];
}

/** Whether two URLs are the same once normalized (`http://a.test` and `http://a.test/` are); false if either is not a URL. */
export function sameUrl(a: string, b: string): boolean {
  try {
    return new URL(a).href === new URL(b).href;
  } catch {
    return false;
  }
}

/**
 * The `WWW-Authenticate` challenge of a 401 (RFC 6750 section 3): `Bearer realm="<realm>"` when
 * the request carried no `Authorization` (no error code, as the RFC asks), with
 * `error="invalid_request"` when the header is not `Bearer <token>`, and with
 * `error="invalid_token"` for a token that was refused; `description` becomes
 * `error_description` (quotes and backslashes dropped, as the RFC allows no escapes there).
 */
export function bearerChallenge(realm: string, authorization: string | undefined, description: string): string {
  const quoted = (value: string) => `"${value.replace(/["\\]/g, "").replace(/[^\x20-\x7e]/g, "?")}"`;
  if (authorization === undefined) return `Bearer realm=${quoted(realm)}`;
  const error = bearerToken(authorization) === undefined ? "invalid_request" : "invalid_token";
  return `Bearer realm=${quoted(realm)}, error="${error}", error_description=${quoted(description)}`;
}
