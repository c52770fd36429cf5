import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { Advisories, AdvisoriesListSchema, OrderBy } from "../../../../gen/platform/vulnerabilities/v1/advisory_pb.js";
import { AdvisoriesService } from "../../../../gen/platform/vulnerabilities/v2/advisories_service_pb.js";
import { UidpFilterSchema } from "../../../../gen/platform/common/v1/uidp_pb.js";
import { invalidField } from "../../../aip/errors.js";
import { callV2 } from "../../../aip/v1/index.js";
import { Violations } from "../../../aip/validation.js";
import { advisoryToV1 } from "./advisory-mapper.js";

const v2 = AdvisoriesService.method;

/** v2 request fields as the v1 filter names them. */
const V1_FIELDS = {
  artifact_names: "artifact_name",
  artifact_types: "artifact_type",
  component_names: "component_name",
  component_types: "component_type",
  component_locations: "component_location",
  artifact_architectures: "artifact_architecture",
  event_review_states: "event_statuses",
  event_authors: "event_author",
  exclude_event_authors: "exclude_event_author",
  event_reviewers: "event_reviewer",
};

/** v1 orders as v2 `order_by`; undefined for the hosted orders on data this server has not. */
const ORDER: Record<OrderBy, string | undefined> = {
  [OrderBy.ORDER_BY_UNSPECIFIED]: "",
  [OrderBy.ID_ASC]: "advisory_id",
  [OrderBy.ID_DESC]: "advisory_id desc",
  [OrderBy.CREATED_AT_ASC]: "create_time",
  [OrderBy.CREATED_AT_DESC]: "create_time desc",
  [OrderBy.UPDATED_AT_ASC]: "update_time",
  [OrderBy.UPDATED_AT_DESC]: "update_time desc",
  [OrderBy.ALIASES_ASC]: undefined,
  [OrderBy.ALIASES_DESC]: undefined,
  [OrderBy.DELETED_AT_ASC]: undefined,
  [OrderBy.DELETED_AT_DESC]: undefined,
};

/**
 * Advisories v1 (`/vulnerabilities/v1/advisories`): the v2 ListAdvisories call. As hosted, this
 * v1 List pages and counts, so v2's page tokens and total pass through.
 */
export function createAdvisoriesV1Service(advisories: ServiceImpl<typeof AdvisoriesService>): ServiceImpl<typeof Advisories> {
  return {
    async list(req, ctx) {
      new Violations().uid("id", req.id, false).throwIfAny();
      const orderBy = ORDER[req.orderBy];
      if (orderBy === undefined) throw invalidField("order_by", `${OrderBy[req.orderBy]} is not supported: order by id, created_at or updated_at`);
      const uidp = create(UidpFilterSchema, req.uidp ?? {});
      if (req.id !== "") {
        // `id` ANDed with `uidp.ids`: an id outside them matches nothing.
        if (uidp.ids.length > 0 && !uidp.ids.includes(req.id)) return create(AdvisoriesListSchema, { totalCount: 0n });
        uidp.ids = [req.id];
      }
      const answer = await callV2(
        v2.listAdvisories,
        advisories.listAdvisories,
        {
          uidp,
          advisoryIds: req.advisoryIds,
          aliases: req.aliases,
          artifactNames: req.artifactName,
          artifactTypes: req.artifactType,
          pageSize: req.pageSize,
          pageToken: req.pageToken,
          orderBy,
          componentNames: req.componentName,
          componentTypes: req.componentType,
          componentLocations: req.componentLocation,
          artifactArchitectures: req.artifactArchitecture,
          legacyAdvisoryIds: req.legacyAdvisoryIds,
          origin: req.origin,
          eventReviewStates: req.eventStatuses,
          eventAuthors: req.eventAuthor,
          excludeEventAuthors: req.excludeEventAuthor,
          eventReviewers: req.eventReviewer,
          eventTypes: req.eventTypes,
          latestEventType: req.latestEventType,
        },
        ctx,
        V1_FIELDS,
      );
      return create(AdvisoriesListSchema, { items: answer.advisories.map(advisoryToV1), nextPageToken: answer.nextPageToken, totalCount: answer.totalCount });
    },
  };
}
