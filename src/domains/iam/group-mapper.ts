import { create } from "@bufbuild/protobuf";
import { GroupSchema, type Group } from "../../../gen/platform/iam/v2/group_pb.js";
import type { GroupRow } from "./store/groups.js";
import { toTimestamp } from "../../aip/time.js";

export function groupFromRow(row: GroupRow): Group {
  return create(GroupSchema, {
    uid: row.uid,
    name: row.name,
    description: row.description,
    createTime: toTimestamp(row.create_time),
    updateTime: toTimestamp(row.update_time),
  });
}
