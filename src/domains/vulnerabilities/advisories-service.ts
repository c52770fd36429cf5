import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { AdvisoriesService, ListAdvisoriesRequestSchema, ListAdvisoriesResponseSchema } from "../../../gen/platform/vulnerabilities/v2/advisories_service_pb.js";
import { evaluateAffected } from "../../engines/advisories/affected.js";
import type { OsvAffected } from "../../engines/advisories/osv/record.js";
import { invalidField } from "../../aip/errors.js";
import { readCachedPage } from "../../aip/list.js";
import { Violations } from "../../aip/validation.js";
import type { Db } from "../kit/schema.js";
import type { ServiceDeps } from "../kit/deps.js";
import { createAdvisoryCache } from "./advisory-cache.js";
import { advisoryFromRow } from "./advisory-mapper.js";
import {
  checkArtifactNames,
  checkEcosystem,
  checkEcosystems,
  checkRecordNames,
  checkUnheldFilters,
  checkVersionFilter,
  MAX_ADVISORY_QUERY,
} from "./advisory-validation.js";
import { advisoryCandidates, advisoryOrderable, getAdvisory, listAdvisoryKeys, type AdvisoryFilter } from "./store/advisories.js";

/** Advisories a `version` filter evaluates at most (they are narrowed by `artifact_names` first). */
export const MAX_VERSION_CANDIDATES = 5000;

/** The uids among the filter's matches whose affected entries include `version` (OSV evaluation rules). */
async function affectingVersion(db: Db, filter: AdvisoryFilter, ecosystem: string, version: string): Promise<string[]> {
  const candidates = await advisoryCandidates(db, filter, MAX_VERSION_CANDIDATES);
  if (candidates.length > MAX_VERSION_CANDIDATES) {
    throw invalidField("artifact_names", `a version filter evaluates at most ${MAX_VERSION_CANDIDATES} advisories; name fewer artifacts`);
  }
  return candidates
    .filter((row) => (JSON.parse(row.affected) as OsvAffected[]).some((entry) => evaluateAffected(ecosystem, version, entry).affected))
    .map((row) => row.uid);
}

/** AdvisoriesService: advisories of the imported OSV records. Any verified caller (the interceptors checked the token). */
export function createAdvisoriesService({ db, pager }: ServiceDeps): ServiceImpl<typeof AdvisoriesService> {
  const cache = createAdvisoryCache();
  return {
    async getAdvisory(req) {
      new Violations().uid("uid", req.uid).throwIfAny();
      return advisoryFromRow(await getAdvisory(db, req.uid));
    },

    async listAdvisories(req) {
      // The answer depends on the request and the store only (any verified caller sees every advisory): cached.
      return readCachedPage({
        pager,
        schema: ListAdvisoriesRequestSchema,
        request: req,
        orderable: advisoryOrderable,
        validate: (v) => {
          checkRecordNames(v, "advisory_ids", req.advisoryIds);
          checkRecordNames(v, "aliases", req.aliases);
          checkArtifactNames(v, "artifact_names", req.artifactNames);
          checkEcosystems(v, "artifact_types", req.artifactTypes);
          checkEcosystem(v, "ecosystem", req.ecosystem);
          v.text("query", req.query, { max: MAX_ADVISORY_QUERY });
          checkVersionFilter(v, req);
          checkUnheldFilters(v, req);
        },
        read: async (p, uidp) => {
          const filter: AdvisoryFilter = {
            uidp,
            recordNames: [req.advisoryIds],
            artifactNames: [req.artifactNames],
            ecosystem: req.ecosystem || undefined,
            ecosystems: req.artifactTypes,
            aliases: req.aliases,
            query: req.query || undefined,
          };
          if (req.version) filter.uids = await affectingVersion(db, filter, req.ecosystem, req.version);
          return listAdvisoryKeys(db, filter, p);
        },
        items: async (keys) => {
          const messages = await cache.messages(db, keys);
          // An advisory withdrawn or removed between reading the page's keys and its rows is left out.
          return keys.flatMap((key) => messages.get(key.uid) ?? []);
        },
        respond: (page) => create(ListAdvisoriesResponseSchema, { ...page, advisories: page.items }),
      });
    },
  };
}
