import { create } from "@bufbuild/protobuf";
import { EmptySchema, timestampMs } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { TagSchema } from "../../../gen/platform/registry/v2/tag_pb.js";
import { ListTagsRequestSchema, ListTagsResponseSchema, TagsService } from "../../../gen/platform/registry/v2/tags_service_pb.js";
import { readPage } from "../../api/list.js";
import { Violations } from "../../api/validation.js";
import { visibilityKey } from "../../auth/principal.js";
import { deleteTag, getTag, listTags, tagOrderable, upsertTag } from "./store/tags.js";
import { inTransaction } from "../../store/transaction.js";
import type { ServiceDeps } from "../deps.js";
import { tagFromRow } from "./registry-mappers.js";
import { checkTagFields, DIGEST, TAG_NAME } from "./registry-validation.js";

/** TagsService: tags of repos, each move recorded in the tag history. Authorization ran in the interceptors. */
export function createTagsService({ db, pager, now }: ServiceDeps): ServiceImpl<typeof TagsService> {
  return {
    async getTag(req) {
      new Violations().uid("uid", req.uid).throwIfAny();
      return tagFromRow(await getTag(db, req.uid));
    },

    async listTags(req, ctx) {
      const page = await readPage({
        pager,
        schema: ListTagsRequestSchema,
        request: req,
        orderable: tagOrderable,
        validate: (v) => {
          v.text("name", req.name, { max: 128, pattern: TAG_NAME });
          v.text("digest", req.digest, { max: 71, pattern: DIGEST });
        },
        read: (p, uidp) =>
          listTags(
            db,
            {
              name: req.name || undefined,
              digest: req.digest || undefined,
              updatedSince: req.updatedSince ? timestampMs(req.updatedSince) : undefined,
              uidp,
              visible: ctx.values.get(visibilityKey),
            },
            p,
          ),
        map: tagFromRow,
      });
      return create(ListTagsResponseSchema, { tags: page.items, ...page });
    },

    async createTag(req, ctx) {
      const tag = req.tag ?? create(TagSchema);
      const violations = new Violations().uid("parent", req.parent);
      checkTagFields(violations, tag);
      violations.throwIfAny();
      const row = await inTransaction(db, ctx.signal, (trx) =>
        upsertTag(trx, req.parent, { name: tag.name, digest: tag.digest, deprecated: tag.deprecated }, now()),
      );
      return tagFromRow(row);
    },

    async deleteTag(req, ctx) {
      new Violations().uid("uid", req.uid).throwIfAny();
      await inTransaction(db, ctx.signal, (trx) => deleteTag(trx, req.uid));
      return create(EmptySchema);
    },
  };
}
