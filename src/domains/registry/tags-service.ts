import { timestampMs } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { TagSchema } from "../../../gen/platform/registry/v2/tag_pb.js";
import { TagsService } from "../../../gen/platform/registry/v2/tags_service_pb.js";
import { checkedCreate, deleteMethod, getMethod, listMethod } from "../kit/standard-methods.js";
import { deleteTag, getTag, listTags, tagOrderable, upsertTag } from "./store/tags.js";
import { inTransaction } from "../../store/transaction.js";
import type { ServiceDeps } from "../kit/deps.js";
import { hiddenForms } from "./tag-forms.js";
import { tagFromRow } from "./tag-mapper.js";
import { checkTagFields, DIGEST, MAX_DIGEST_LENGTH, TAG_NAME } from "./tag-validation.js";

/** TagsService: tags of repos, each move recorded in the tag history. Authorization ran in the interceptors. */
export function createTagsService({ db, pager, now }: ServiceDeps): ServiceImpl<typeof TagsService> {
  return {
    getTag: (req) => getMethod(req.uid, (uid) => getTag(db, uid), tagFromRow),

    listTags: (req, ctx) => listMethod(ctx, pager, TagsService.method.listTags, req, "tags", {
      orderable: tagOrderable,
      validate: (v) => {
        v.text("name", req.name, { max: 128, pattern: TAG_NAME });
        v.text("digest", req.digest, { max: MAX_DIGEST_LENGTH, pattern: DIGEST });
      },
      read: (page, scope) => {
        const updatedSince = req.updatedSince ? timestampMs(req.updatedSince) : undefined;
        // A tag asked for by name is found whatever its form.
        const hidden = req.name ? 0 : hiddenForms({ referrers: req.includeReferrers, dates: req.includeDates, epochs: req.includeEpochs });
        return listTags(db, { name: req.name || undefined, digest: req.digest || undefined, updatedSince, hiddenForms: hidden, ...scope }, page);
      },
      map: tagFromRow,
    }),

    async createTag(req, ctx) {
      const [tag] = checkedCreate(TagSchema, req.tag, req.parent, checkTagFields);
      return inTransaction(db, ctx.signal, async (trx) => tagFromRow(await upsertTag(trx, req.parent, { name: tag.name, digest: tag.digest, deprecated: tag.deprecated }, now())));
    },

    deleteTag: (req, ctx) => deleteMethod(db, ctx, req.uid, deleteTag),
  };
}
