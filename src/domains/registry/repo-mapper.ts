import { create } from "@bufbuild/protobuf";
import { RepoReadmeSchema, RepoSchema, type Repo, type RepoReadme } from "../../../gen/platform/registry/v2/repo_pb.js";
import type { RepoRow } from "./store/repos.js";
import { toTimestamp } from "../../aip/time.js";
import { immutableTagsOf } from "./immutable-tags.js";

export function repoFromRow(row: RepoRow): Repo {
  return create(RepoSchema, {
    uid: row.uid,
    name: row.name,
    description: row.description,
    createTime: toTimestamp(Number(row.create_time)),
    updateTime: toTimestamp(Number(row.update_time)),
    immutableTags: immutableTagsOf(row),
  });
}

export function readmeFromRow(row: RepoRow): RepoReadme {
  return create(RepoReadmeSchema, { uid: row.uid, content: row.readme });
}
