import type { RegistryRequest } from "./context.js";

/**
 * True when the request's `If-None-Match` names `digest`'s entity tag (`"<digest>"`, weak or
 * strong: a digest names the bytes), or is `*`: the answer is then `304 Not Modified` with the
 * same `ETag` and `Docker-Content-Digest`, decided without reading the content (RFC 9110 13.1.2).
 */
export function matchesIfNoneMatch(req: RegistryRequest, digest: string): boolean {
  const header = req.headers["if-none-match"];
  if (typeof header !== "string" || header === "") return false;
  const tag = `"${digest}"`;
  return header.split(",").some((part) => {
    const candidate = part.trim();
    return candidate === "*" || candidate === tag || candidate === `W/${tag}`;
  });
}
