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
