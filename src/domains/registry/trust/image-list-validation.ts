import type { ListImagesRequest } from "../../../../gen/platform/registry/v2/images_service_pb.js";
import type { Violations } from "../../../aip/validation.js";
import { DIGEST, MAX_DIGEST_LENGTH } from "../digests.js";
import type { ImageFilter } from "./store/image-list.js";

/** Adds the violations of ListImages' filters; answers the filter they make. */
export function checkImageFilter(violations: Violations, req: ListImagesRequest): ImageFilter {
  violations.uid("repo_uid", req.repoUid);
  if (req.verifiedBy !== "" && req.verifiedBy !== "*") violations.uid("verified_by", req.verifiedBy);
  if (req.verifiedBy !== "" && req.unverified) violations.add("unverified", "must be false when `verified_by` is set");
  violations.text("digest", req.digest, { max: MAX_DIGEST_LENGTH, pattern: DIGEST });
  return { verifiedBy: req.verifiedBy || undefined, unverified: req.unverified, digest: req.digest || undefined };
}
