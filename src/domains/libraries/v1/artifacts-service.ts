import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  ArtifactListSchema,
  Artifacts,
  ArtifactVersionListSchema,
  GetArtifactCountResponse_CountSchema,
  GetArtifactCountResponseSchema,
} from "../../../../gen/platform/libraries/v1/artifacts_pb.js";
import { ArtifactsService } from "../../../../gen/platform/libraries/v2/artifacts_service_pb.js";
import { ApiError } from "../../../aip/errors.js";
import { callV2, listAll } from "../../../aip/v1/index.js";
import { NotFoundError } from "../../../store/errors.js";
import { artifactToV1, artifactVersionToV1, ecosystemFromV1, ecosystemToV1 } from "./artifact-mapper.js";

const v2 = ArtifactsService.method;

/**
 * Artifacts v1 (`/libraries/v1/artifacts`): each call is the v2 ArtifactsService call it maps
 * onto. As hosted, List pages and counts; ListVersions answers every version.
 */
export function createArtifactsV1Service(artifacts: ServiceImpl<typeof ArtifactsService>): ServiceImpl<typeof Artifacts> {
  return {
    async list(req, ctx) {
      const answer = await callV2(
        v2.listArtifacts,
        artifacts.listArtifacts,
        { ecosystems: req.ecosystems.map(ecosystemFromV1), query: req.query, remediated: req.remediated, pageSize: req.pageSize, pageToken: req.pageToken, skip: req.skip },
        ctx,
      );
      return create(ArtifactListSchema, {
        items: answer.artifacts.map(artifactToV1),
        nextPageToken: answer.nextPageToken,
        totalArtifacts: Number(answer.totalCount ?? 0n),
        skipped: answer.skipped,
      });
    },

    async listVersions(req, ctx) {
      try {
        const items = await listAll({ id: "" }, async (_uidp, page) => {
          const answer = await callV2(v2.listArtifactVersions, artifacts.listArtifactVersions, { artifactId: req.id, ...page }, ctx, { artifact_id: "id" });
          return { items: answer.artifactVersions, nextPageToken: answer.nextPageToken };
        });
        return create(ArtifactVersionListSchema, { items: items.map(artifactVersionToV1) });
      } catch (error) {
        // A missing artifact is an empty list with 200 (spec 9.3).
        if (error instanceof NotFoundError || (error instanceof ApiError && error.kind === "NOT_FOUND")) return create(ArtifactVersionListSchema);
        throw error;
      }
    },

    async getArtifactCount(req, ctx) {
      const answer = await callV2(v2.getArtifactCount, artifacts.getArtifactCount, { ecosystems: req.ecosystems.map(ecosystemFromV1) }, ctx);
      return create(GetArtifactCountResponseSchema, {
        counts: answer.counts.map((c) => create(GetArtifactCountResponse_CountSchema, { ecosystem: ecosystemToV1(c.ecosystem), totalArtifacts: Number(c.totalCount) })),
      });
    },
  };
}
