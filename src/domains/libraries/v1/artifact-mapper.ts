import { create } from "@bufbuild/protobuf";
import {
  ArtifactSchema as V1ArtifactSchema,
  ArtifactVersionSchema as V1ArtifactVersionSchema,
  Ecosystem as V1Ecosystem,
  type Artifact as V1Artifact,
  type ArtifactVersion as V1ArtifactVersion,
} from "../../../../gen/platform/libraries/v1/artifacts_pb.js";
import { Ecosystem, type Artifact, type ArtifactVersion } from "../../../../gen/platform/libraries/v2/artifact_pb.js";

/**
 * v1 ecosystems are the hosted numbers; v2's JAVASCRIPT is this server's own number. Any other
 * value passes through unchanged, so v2's validation names it.
 */
export function ecosystemFromV1(ecosystem: V1Ecosystem): Ecosystem {
  return ecosystem === V1Ecosystem.JAVASCRIPT ? Ecosystem.ECOSYSTEM_JAVASCRIPT : (ecosystem as number as Ecosystem);
}

export function ecosystemToV1(ecosystem: Ecosystem): V1Ecosystem {
  return ecosystem === Ecosystem.ECOSYSTEM_JAVASCRIPT ? V1Ecosystem.JAVASCRIPT : (ecosystem as number as V1Ecosystem);
}

/** A v2 artifact in the v1 shape: `uid` is `id`, times `created_at`/`updated_at`. */
export function artifactToV1(artifact: Artifact): V1Artifact {
  return create(V1ArtifactSchema, {
    id: artifact.uid,
    name: artifact.name,
    description: artifact.description,
    ecosystem: ecosystemToV1(artifact.ecosystem),
    latestVersion: artifact.latestVersion,
    versionCount: artifact.versionCount,
    createdAt: artifact.createTime,
    updatedAt: artifact.updateTime,
  });
}

/** A v2 artifact version in the v1 shape (v1 shows no advisories). */
export function artifactVersionToV1(version: ArtifactVersion): V1ArtifactVersion {
  return create(V1ArtifactVersionSchema, {
    id: version.uid,
    name: version.name,
    version: version.version,
    description: version.description,
    createdAt: version.createTime,
    updatedAt: version.updateTime,
    sizeBytes: version.sizeBytes,
    upstreamPublishedDate: version.publishTime,
  });
}
