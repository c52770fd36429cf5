import { Violations } from "../../aip/validation.js";
import { DIGEST, MAX_DIGEST_LENGTH } from "./digests.js";

/** An OCI platform architecture, e.g. amd64, arm64, ppc64le. */
export const ARCHITECTURE = /^[a-z0-9_]+$/;

/** The fields naming an image: its repo and its manifest digest. */
export function checkImageRef(req: { repoUid: string; digest: string }): Violations {
  return new Violations().uid("repo_uid", req.repoUid).text("digest", req.digest, { required: true, max: MAX_DIGEST_LENGTH, pattern: DIGEST });
}
