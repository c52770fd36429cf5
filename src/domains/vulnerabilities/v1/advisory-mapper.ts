import { create } from "@bufbuild/protobuf";
import { AdvisorySchema as V1AdvisorySchema, type Advisory as V1Advisory } from "../../../../gen/platform/vulnerabilities/v1/advisory_pb.js";
import type { Advisory } from "../../../../gen/platform/vulnerabilities/v2/advisory_pb.js";

/** A v2 advisory in the v1 shape: `uid` is `id`, the ecosystem is `artifact_type`, times `created_at`/`updated_at`. */
export function advisoryToV1(advisory: Advisory): V1Advisory {
  return create(V1AdvisorySchema, {
    id: advisory.uid,
    artifactType: advisory.ecosystem,
    artifactName: advisory.artifactName,
    createdAt: advisory.createTime,
    updatedAt: advisory.updateTime,
    aliases: advisory.aliases,
    advisoryId: advisory.advisoryId,
  });
}
