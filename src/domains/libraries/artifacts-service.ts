import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  ArtifactsService,
  GetArtifactCountResponse_EcosystemCountSchema,
  GetArtifactCountResponseSchema,
  ListArtifactsRequestSchema,
  ListArtifactsResponseSchema,
  ListArtifactVersionsRequestSchema,
  ListArtifactVersionsResponseSchema,
} from "../../../gen/platform/libraries/v2/artifacts_service_pb.js";
import type { Advisory } from "../../../gen/platform/vulnerabilities/v2/advisory_pb.js";
import { evaluateAffected } from "../../engines/advisories/affected.js";
import type { OsvAffected } from "../../engines/advisories/osv/record.js";
import { readCachedPage, readPage } from "../../aip/list.js";
import { Violations } from "../../aip/validation.js";
import { visibilityKey } from "../../access/principal.js";
import type { Db } from "../kit/schema.js";
import type { ServiceDeps } from "../kit/deps.js";
import { advisoryFromRow } from "../vulnerabilities/index.js";
import { advisoriesByUid, advisoryCandidates } from "../vulnerabilities/index.js";
import { artifactFromRow, artifactVersionFromRow } from "./artifact-mapper.js";
import { apiEcosystem, checkEcosystems } from "./ecosystems.js";
import { artifactOrderable, artifactVersionOrderable, countArtifacts, getArtifact, listArtifacts, listArtifactVersions, type ArtifactRow, type ArtifactVersionRow } from "./store/artifacts.js";

/** Longest `query`. */
const MAX_QUERY = 200;
/** Advisories of one artifact a page of versions is checked against. */
const MAX_ARTIFACT_ADVISORIES = 5000;

/** The advisories (not withdrawn) of the artifact's ecosystem and name that affect each version. */
async function advisoriesByVersion(db: Db, artifact: ArtifactRow, versions: ArtifactVersionRow[]): Promise<Map<string, Advisory[]>> {
  const out = new Map<string, Advisory[]>(versions.map((v) => [v.uid, []]));
  if (versions.length === 0) return out;
  const candidates = await advisoryCandidates(db, { artifactNames: [[artifact.name]], ecosystem: artifact.ecosystem }, MAX_ARTIFACT_ADVISORIES);
  if (candidates.length === 0) return out;
  const full = await advisoriesByUid(db, candidates.map((c) => c.uid));
  for (const row of full) {
    const entries = JSON.parse(row.affected) as OsvAffected[];
    for (const v of versions) {
      const hit = entries.some((entry) => {
        try {
          return evaluateAffected(artifact.ecosystem, v.version, entry).affected;
        } catch {
          return false;
        }
      });
      if (hit) out.get(v.uid)!.push(advisoryFromRow(row));
    }
  }
  return out;
}

/** ArtifactsService: each organization's library index, read where the caller may list artifacts. */
export function createArtifactsService({ db, pager }: ServiceDeps): ServiceImpl<typeof ArtifactsService> {
  return {
    async listArtifacts(req, ctx) {
      let ecosystems: string[] = [];
      // While the rows are cached (SQLite, nothing written since), so is the answer: built and encoded once.
      return readCachedPage({
        pager,
        schema: ListArtifactsRequestSchema,
        request: req,
        orderable: artifactOrderable,
        validate: (v) => {
          ecosystems = checkEcosystems(v, req.ecosystems);
          v.text("query", req.query, { max: MAX_QUERY });
        },
        read: async (p, uidp) => {
          // No build of this server is remediated: asking for remediated artifacts finds none.
          if (req.remediated) return { rows: [], total: 0 };
          return listArtifacts(db, { ecosystems, query: req.query || undefined, uidp, visible: ctx.values.get(visibilityKey) }, p);
        },
        items: async (rows) => rows.map(artifactFromRow),
        respond: (page) => create(ListArtifactsResponseSchema, { artifacts: page.items, ...page }),
      });
    },

    async listArtifactVersions(req) {
      new Violations().uid("artifact_id", req.artifactId).throwIfAny();
      const artifact = await getArtifact(db, req.artifactId);
      let advisories = new Map<string, Advisory[]>();
      const page = await readPage({
        pager,
        schema: ListArtifactVersionsRequestSchema,
        request: { ...req, orderBy: req.orderBy || "version desc" },
        orderable: artifactVersionOrderable,
        read: async (p, uidp) => {
          const result = await listArtifactVersions(db, artifact.uid, uidp, p);
          advisories = await advisoriesByVersion(db, artifact, result.rows.slice(0, p.limit));
          return result;
        },
        map: (row) => artifactVersionFromRow(artifact, row, advisories.get(row.uid) ?? []),
      });
      return create(ListArtifactVersionsResponseSchema, { artifactVersions: page.items, ...page });
    },

    async getArtifactCount(req, ctx) {
      const v = new Violations();
      const ecosystems = checkEcosystems(v, req.ecosystems);
      v.throwIfAny();
      const counts = await countArtifacts(db, { ecosystems, visible: ctx.values.get(visibilityKey) });
      return create(GetArtifactCountResponseSchema, {
        counts: ecosystems.map((e) => create(GetArtifactCountResponse_EcosystemCountSchema, { ecosystem: apiEcosystem(e), totalCount: BigInt(counts.get(e) ?? 0) })),
      });
    },
  };
}
