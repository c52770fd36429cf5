import { create } from "@bufbuild/protobuf";
import { ImageSchema, type Image } from "../../../../gen/platform/registry/v2/images_service_pb.js";
import { toTimestamp } from "../../../aip/time.js";
import type { ImageListRow } from "./store/image-list.js";

export function imageFromRow(repoUid: string, row: ImageListRow): Image {
  return create(ImageSchema, {
    repoUid,
    digest: row.uid,
    mediaType: row.media_type,
    artifactType: row.artifact_type,
    verifiedBy: row.verified_by,
    verifiedAttestations: row.attestations,
    createTime: toTimestamp(row.create_time),
  });
}
