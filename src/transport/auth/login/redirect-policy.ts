/**
 * Where a login may send its one-time code (RFC 8252 7.3, RFC 9700 4.1): a loopback address on
 * any port over http (the CLI's listener: `127.0.0.1`, `[::1]` or `localhost`), or a URL whose
 * origin the operator allows (`--login-redirect-origins`). Nothing else: an open redirect would
 * hand a person's code to whoever wrote the link. Fragments are refused (RFC 6749 3.1.2).
 */
export function redirectAllowed(redirectUri: string, allowedOrigins: readonly string[]): boolean {
  let url: URL;
  try {
    url = new URL(redirectUri);
  } catch {
    return false;
  }
  if (url.hash !== "" || redirectUri.includes("#") || url.username !== "" || url.password !== "") return false;
  if (url.protocol === "http:" && ["127.0.0.1", "[::1]", "localhost"].includes(url.hostname) && url.port !== "") return true;
  return allowedOrigins.includes(url.origin);
}
