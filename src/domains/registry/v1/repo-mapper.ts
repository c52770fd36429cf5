import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { RepoSchema as V1RepoSchema, type Repo as V1Repo } from "../../../../gen/platform/registry/v1/registry_pb.js";
import type { Repo, RepoSchema } from "../../../../gen/platform/registry/v2/repo_pb.js";

/** A v2 repo in the v1 shape: `uid` is `id`, `create_time` kept, no update time; `readme` when given. */
export function repoToV1(repo: Repo, readme = ""): V1Repo {
  return create(V1RepoSchema, { id: repo.uid, name: repo.name, description: repo.description, createTime: repo.createTime, readme });
}

/** A v1 repo as the v2 repo a Create writes. */
export function repoFromV1(repo: V1Repo | undefined): MessageInitShape<typeof RepoSchema> {
  return { uid: repo?.id ?? "", name: repo?.name ?? "", description: repo?.description ?? "" };
}
