import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { UidpFilterSchema, type UidpFilter } from "../../../gen/platform/common/v1/uidp_pb.js";
import { failedPrecondition } from "../errors.js";
import { MAX_PAGE_SIZE } from "../pagination.js";
import { Violations } from "../validation.js";

/** The most items one v1 List answers; v1 has no paging, so a larger result is refused (decisions.md, "v1"). */
export const V1_LIST_MAX = 5000;

/** What a v1 List reads of one page of the v2 List it maps onto. */
export interface V2Page<Item> {
  items: Item[];
  nextPageToken: string;
}

/** The v1 filter fields every resource shares: `id` (the v2 `uid`) and the uidp filter. */
export interface V1Filter {
  id: string;
  uidp?: MessageInitShape<typeof UidpFilterSchema>;
}

/**
 * The full result of a v1 List (spec 9.3: no paging, no total, a missing resource is an empty
 * list): `read` is called with the uidp filter of `filter` (its `uidp`, narrowed to `id` when
 * set) and successive v2 page tokens, until the v2 List has no next page.
 *
 * - `id` that is not a uid: INVALID_ARGUMENT naming `id`;
 * - `id` outside a non-empty `uidp.ids`: an empty list without a read;
 * - more than `max` items: FAILED_PRECONDITION / TOO_MANY_RESULTS (narrow the filter or use v2).
 *
 * Items come in the v2 List's default order (by uid). Everything else (the caller's
 * visibility, the other filters, their validation) is the v2 List's.
 */
export async function listAll<Item>(
  filter: V1Filter,
  read: (uidp: UidpFilter, page: { pageSize: number; pageToken: string }) => Promise<V2Page<Item>>,
  max = V1_LIST_MAX,
): Promise<Item[]> {
  new Violations().uid("id", filter.id, false).throwIfAny();
  const uidp = create(UidpFilterSchema, filter.uidp ?? {});
  if (filter.id !== "") {
    if (uidp.ids.length > 0 && !uidp.ids.includes(filter.id)) return [];
    uidp.ids = [filter.id];
  }
  const items: Item[] = [];
  let pageToken = "";
  do {
    const page = await read(uidp, { pageSize: MAX_PAGE_SIZE, pageToken });
    items.push(...page.items);
    if (items.length > max) {
      throw failedPrecondition([
        {
          type: "TOO_MANY_RESULTS",
          subject: "items",
          description: `more than ${max} items match; narrow the filter (uidp, name) or page through the v2 List`,
        },
      ]);
    }
    pageToken = page.nextPageToken;
  } while (pageToken !== "");
  return items;
}

/**
 * `listAll` over a v2 List: `read` answers one page of it (called as `listAll`'s `read` is),
 * `items` the items of that answer.
 */
export function listAllOf<Answer extends { nextPageToken: string }, Item>(
  filter: V1Filter,
  read: (uidp: UidpFilter, page: { pageSize: number; pageToken: string }) => Promise<Answer>,
  items: (answer: Answer) => Item[],
): Promise<Item[]> {
  return listAll(filter, async (uidp, page) => {
    const answer = await read(uidp, page);
    return { items: items(answer), nextPageToken: answer.nextPageToken };
  });
}
