import type { Repository } from "../../domains/registry/index.js";
import { writeEmpty, type RegistryContext, type RegistryRequest, type RegistryResponse } from "./context.js";

/**
 * `serve --registry-storage-redirect`: a blob GET answered with `307 Temporary Redirect` to a
 * presigned URL of the bucket, so the bytes go from the bucket to the client (distribution's
 * `redirect` storage option). As distribution does, every GET is redirected, a Range request too
 * (the client sends its Range to the bucket, which answers 206). Unlike distribution, HEAD and a
 * GET whose If-None-Match names the digest (304) are answered by the registry: size and digest are
 * known here already, and a presigned URL is signed for one method.
 */

/**
 * Answers `req` with a redirect to blob `digest` of `repo` and returns true, when the server redirects
 * blobs, `req` is a GET and the content store gives a URL; returns false, having written
 * nothing, otherwise. Call it only once the caller may pull and the blob was found in the repo:
 * the URL is good for anyone holding it until it expires. The answer is `no-store`, so no cache
 * keeps the URL.
 */
export async function redirectBlob(ctx: RegistryContext, req: RegistryRequest, res: RegistryResponse, repo: Repository, digest: string): Promise<boolean> {
  const redirect = ctx.config.blobRedirect;
  if (redirect === undefined || req.method !== "GET") return false;
  const location = await repo.blobRedirectUrl(digest, redirect.expiresInSeconds);
  if (location === undefined) return false;
  writeEmpty(res, 307, { location, "docker-content-digest": digest, "cache-control": "no-store" });
  return true;
}
