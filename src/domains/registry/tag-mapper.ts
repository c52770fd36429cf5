import { create } from "@bufbuild/protobuf";
import { TagSchema, type Tag } from "../../../gen/platform/registry/v2/tag_pb.js";
import { toTimestamp } from "../../aip/time.js";
import type { TagRow } from "./store/tags.js";

export function tagFromRow(row: TagRow): Tag {
  return create(TagSchema, {
    uid: row.uid,
    name: row.name,
    digest: row.digest,
    deprecated: Number(row.deprecated) === 1,
    createTime: toTimestamp(Number(row.create_time)),
    updateTime: toTimestamp(Number(row.update_time)),
  });
}
