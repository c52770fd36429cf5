import { create } from "@bufbuild/protobuf";
import { ArtifactSchema, ArtifactVersionSchema, type Artifact, type ArtifactVersion } from "../../../gen/platform/libraries/v2/artifact_pb.js";
import type { Advisory } from "../../../gen/platform/vulnerabilities/v2/advisory_pb.js";
import { toTimestamp } from "../../aip/time.js";
import { apiEcosystem } from "./ecosystems.js";
import type { ArtifactRow, ArtifactVersionRow } from "./store/artifacts.js";

export function artifactFromRow(row: ArtifactRow): Artifact {
  return create(ArtifactSchema, {
    uid: row.uid,
    name: row.name,
    description: row.description,
    ecosystem: apiEcosystem(row.ecosystem),
    latestVersion: row.latest_version,
    versionCount: Number(row.version_count),
    createTime: toTimestamp(Number(row.create_time)),
    updateTime: toTimestamp(Number(row.update_time)),
  });
}

export function artifactVersionFromRow(artifact: ArtifactRow, row: ArtifactVersionRow, advisories: Advisory[]): ArtifactVersion {
  return create(ArtifactVersionSchema, {
    uid: row.uid,
    name: artifact.name,
    version: row.version,
    description: row.description || artifact.description,
    createTime: toTimestamp(Number(row.create_time)),
    updateTime: toTimestamp(Number(row.update_time)),
    sizeBytes: BigInt(row.size_bytes),
    publishTime: row.publish_time === null ? undefined : toTimestamp(Number(row.publish_time)),
    advisories,
  });
}
