import { timestampMs, type Timestamp } from "@bufbuild/protobuf/wkt";
import type { ImageRef } from "../../../gen/platform/advisory/v2/security_advisory_service_pb.js";
import { MAX_PAGE_SIZE } from "../../aip/pagination.js";
import type { Violations } from "../../aip/validation.js";
import { DAY_MS, TAG_NAME as TAG } from "../registry/index.js";

/** Midnight UTC of a time's date. */
export const dayOf = (time: Timestamp) => Math.floor(timestampMs(time) / DAY_MS) * DAY_MS;

/** The request's repos and tags (at most 200 repos, 200 tags each) and its day bounds (start not after end). */
export function checkResolvedVulnsRequest(v: Violations, req: { imageRefs: ImageRef[]; startTime?: Timestamp; endTime?: Timestamp }): void {
  if (req.imageRefs.length > MAX_PAGE_SIZE) v.add("image_refs", `must hold at most ${MAX_PAGE_SIZE} repos`);
  req.imageRefs.forEach((ref, i) => {
    v.uid(`image_refs[${i}].repo`, ref.repo);
    if (ref.tags.length > MAX_PAGE_SIZE) v.add(`image_refs[${i}].tags`, `must hold at most ${MAX_PAGE_SIZE} tags`);
    ref.tags.forEach((tag, j) => v.text(`image_refs[${i}].tags[${j}]`, tag, { required: true, max: 128, pattern: TAG }));
  });
  if (req.startTime && req.endTime && dayOf(req.startTime) > dayOf(req.endTime)) v.add("start_time", "must not be after end_time");
}
