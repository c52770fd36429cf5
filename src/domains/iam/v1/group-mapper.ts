import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { GroupSchema as V1GroupSchema, type Group as V1Group } from "../../../../gen/platform/iam/v1/group_pb.js";
import type { Group, GroupSchema } from "../../../../gen/platform/iam/v2/group_pb.js";

/** A v2 group in the v1 shape: `uid` is `id`; v1 shows no times. */
export function groupToV1(group: Group): V1Group {
  return create(V1GroupSchema, { id: group.uid, name: group.name, description: group.description });
}

/** A v1 group as the v2 group a Create or Update writes. */
export function groupFromV1(group: V1Group | undefined): MessageInitShape<typeof GroupSchema> {
  return { uid: group?.id ?? "", name: group?.name ?? "", description: group?.description ?? "" };
}
