import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { EolTagSchema, EolTagStatus, TagSchema as V1TagSchema, type EolTag, type Tag as V1Tag } from "../../../../gen/platform/registry/v1/registry_pb.js";
import type { Tag, TagSchema } from "../../../../gen/platform/registry/v2/tag_pb.js";
import type { TagRow } from "../store/tags.js";

/** A v2 tag in the v1 shape: `uid` is `id`, `update_time` is `last_updated`. */
export function tagToV1(tag: Tag): V1Tag {
  return create(V1TagSchema, { id: tag.uid, name: tag.name, digest: tag.digest, lastUpdated: tag.updateTime, deprecated: tag.deprecated });
}

/** A v1 tag as the v2 tag a Create writes. */
export function tagFromV1(tag: V1Tag | undefined): MessageInitShape<typeof TagSchema> {
  return { name: tag?.name ?? "", digest: tag?.digest ?? "", deprecated: tag?.deprecated ?? false };
}

/** A deprecated tag as an end-of-life tag: inactive, with no grace period (none is kept). */
export function eolTagFromRow(row: TagRow): EolTag {
  return create(EolTagSchema, { id: row.uid, name: row.name, tagStatus: EolTagStatus.TAG_INACTIVE });
}

/** The tag that changed last (by update time, then name), or undefined for none. */
export function latestTag(tags: readonly Tag[]): Tag | undefined {
  const ms = (tag: Tag) => (tag.updateTime ? timestampMs(tag.updateTime) : 0);
  let latest: Tag | undefined;
  for (const tag of tags) {
    if (latest === undefined || ms(tag) > ms(latest) || (ms(tag) === ms(latest) && tag.name > latest.name)) latest = tag;
  }
  return latest;
}
