import { create } from "@bufbuild/protobuf";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  ArchsSchema,
  EolTagFilterSchema,
  EolTagListSchema,
  Registry,
  RepoListSchema,
  RepoTagsSummarySchema,
  SizeSchema,
  TagHistoryListSchema,
  TagHistorySchema,
  TagListSchema,
  VulnCountReportListSchema,
  VulnReportSchema,
} from "../../../../gen/platform/registry/v1/registry_pb.js";
import { ImagesService, type VulnerabilityReport } from "../../../../gen/platform/registry/v2/images_service_pb.js";
import { ReposService } from "../../../../gen/platform/registry/v2/repos_service_pb.js";
import { TagsService } from "../../../../gen/platform/registry/v2/tags_service_pb.js";
import { ApiError } from "../../../aip/errors.js";
import { listMethod } from "../../kit/standard-methods.js";
import { toTimestamp } from "../../../aip/time.js";
import { parentOf } from "../../../aip/uidp.js";
import { Violations } from "../../../aip/validation.js";
import { v2CallKey } from "../../../aip/v1/call.js";
import { callV2, deleteV1, listAll, listAllOf } from "../../../aip/v1/index.js";
import { ConflictError, NotFoundError } from "../../../store/errors.js";
import { inTransaction } from "../../../store/transaction.js";
import type { ServiceDeps } from "../../kit/deps.js";
import { createImagesService } from "../images-service.js";
import { checkReadme, checkRepoFields } from "../repo-validation.js";
import { createReposService } from "../repos-service.js";
import { getRepo, updateReadme, updateRepo } from "../store/repos.js";
import { readTagHistory } from "../store/tag-history.js";
import { getTag, listTags, tagOrderable, upsertTag } from "../store/tags.js";
import { checkTagFields, TAG_NAME } from "../tag-validation.js";
import { tagFromRow } from "../tag-mapper.js";
import { createTagsService } from "../tags-service.js";
import { repoFromV1, repoToV1 } from "./repo-mapper.js";
import { repoFromRow } from "../repo-mapper.js";
import { hiddenForms } from "../tag-forms.js";
import { includedForms, keepsTag } from "./tag-filter.js";
import { eolTagFromRow, latestTag, tagFromV1, tagToV1 } from "./tag-mapper.js";
import { vulnCountReportOf, vulnReportToV1 } from "./vuln-report-mapper.js";

const repoRpc = ReposService.method;
const tagRpc = TagsService.method;
const imageRpc = ImagesService.method;
/** v2 request fields as v1 names them, for INVALID_ARGUMENT (`callV2`). */
const ID = { uid: "id" };
const IMAGE = { repo_uid: "repo_id", architecture: "arch" };

/** The most records one tag history answers (as the registry's Tag History API). */
const HISTORY_LIMIT = 1000;

/**
 * Registry v1 (`/registry/v1/...`): each call is the v2 Repos, Tags or Images call it maps onto;
 * the v1 writes v2 has no single call for (a PUT of a repo with its readme, a PUT of a tag) and
 * the v1-only reads (end-of-life tags, tag history) use the same repositories, in one
 * transaction. Authorization ran in the interceptors, from this service's proto options.
 */
export function createRegistryV1Service(deps: ServiceDeps): ServiceImpl<typeof Registry> {
  const { db, now, pager } = deps;
  const repos = createReposService(deps);
  const tags = createTagsService(deps);
  const images = createImagesService(deps);

  return {
    async createRepo(req, ctx) {
      try {
        return repoToV1(await callV2(repoRpc.createRepo, repos.createRepo, { parent: req.parentId, repo: repoFromV1(req.repo) }, ctx, { parent: "parent_id" }));
      } catch (error) {
        const taken = error instanceof ConflictError || (error instanceof ApiError && error.kind === "ALREADY_EXISTS");
        if (req.preventExisting || !taken) throw error;
        const same = await callV2(repoRpc.listRepos, repos.listRepos, { uidp: { childrenOf: req.parentId }, name: req.repo?.name ?? "" }, ctx);
        if (same.repos.length !== 1) throw error;
        return repoToV1(same.repos[0]);
      }
    },

    async updateRepo(req, ctx) {
      new Violations().uid("id", req.id).throwIfAny();
      // Its event is the v2 Update's (type and body), as for the v1 calls that go through callV2.
      // The mask names what a v1 PUT replaces: v1's Repo has no immutable_tags, which it keeps.
      ctx.values.set(v2CallKey, {
        method: repoRpc.updateRepo,
        message: create(repoRpc.updateRepo.input, { repo: { uid: req.id, name: req.name, description: req.description }, updateMask: { paths: ["name", "description"] } }),
      });
      const repo = await inTransaction(db, ctx.signal, async (trx) => {
        await getRepo(trx, req.id);
        const violations = new Violations();
        checkRepoFields(violations, req, "");
        checkReadme(violations, req.readme, "readme");
        violations.throwIfAny();
        const time = now();
        await updateRepo(trx, req.id, { name: req.name, description: req.description, update_time: time });
        return repoFromRow(await updateReadme(trx, req.id, req.readme, time));
      });
      return repoToV1(repo, req.readme);
    },

    async listRepos(req, ctx) {
      const items = await listAllOf(req, (uidp, page) => callV2(repoRpc.listRepos, repos.listRepos, { uidp, name: req.name, ...page }, ctx), (answer) => answer.repos);
      // The readme comes with one repo asked for by `id` (v1's Get), not with a listing of many.
      if (req.id !== "" && items.length === 1) {
        const readme = await callV2(repoRpc.getRepoReadme, repos.getRepoReadme, { uid: req.id }, ctx);
        return create(RepoListSchema, { items: [repoToV1(items[0], readme.content)] });
      }
      return create(RepoListSchema, { items: items.map((repo) => repoToV1(repo)) });
    },

    deleteRepo: (req, ctx) => deleteV1("repo", req.id, () => callV2(repoRpc.deleteRepo, repos.deleteRepo, { uid: req.id }, ctx, ID)),

    createTag: async (req, ctx) => tagToV1(await callV2(tagRpc.createTag, tags.createTag, { parent: req.repoId, tag: tagFromV1(req.tag) }, ctx, { parent: "repo_id" })),

    async updateTag(req, ctx) {
      new Violations().uid("id", req.id).throwIfAny();
      return inTransaction(db, ctx.signal, async (trx) => {
        const current = await getTag(trx, req.id);
        const violations = new Violations();
        checkTagFields(violations, { name: req.name || current.name, digest: req.digest }, "");
        if (req.name !== "" && req.name !== current.name) violations.add("name", "a tag cannot be renamed: create a tag of the new name instead");
        violations.throwIfAny();
        return tagToV1(tagFromRow(await upsertTag(trx, current.repo_uid, { name: current.name, digest: req.digest, deprecated: req.deprecated }, now())));
      });
    },

    deleteTag: (req, ctx) => deleteV1("tag", req.id, () => callV2(tagRpc.deleteTag, tags.deleteTag, { uid: req.id }, ctx, ID)),

    async listTags(req, ctx) {
      const items = await listAll(req, async (uidp, page) => {
        const include = includedForms(req);
        const answer = await callV2(
          tagRpc.listTags,
          tags.listTags,
          { uidp, name: req.name, digest: req.digest, updatedSince: req.updatedSince, includeReferrers: include.referrers, includeDates: include.dates, includeEpochs: include.epochs, ...page },
          ctx,
        );
        return { items: answer.tags, nextPageToken: answer.nextPageToken };
      });
      return create(TagListSchema, { items: items.filter((tag) => keepsTag(tag.name, req)).map(tagToV1) });
    },

    async getRepoTagsSummary(req, ctx) {
      const tagged = await emptyIfMissing(undefined, async () => {
        await callV2(repoRpc.getRepo, repos.getRepo, { uid: req.repoId }, ctx, { uid: "repo_id" });
        return listAll({ id: "", uidp: { childrenOf: req.repoId } }, async (uidp, page) => {
          const include = includedForms(req);
          const answer = await callV2(tagRpc.listTags, tags.listTags, { uidp, includeReferrers: include.referrers, includeDates: include.dates, includeEpochs: include.epochs, ...page }, ctx);
          return { items: answer.tags, nextPageToken: answer.nextPageToken };
        });
      });
      if (tagged === undefined) return create(RepoTagsSummarySchema);
      const latest = latestTag(tagged);
      return create(RepoTagsSummarySchema, {
        id: req.repoId,
        tagCount: BigInt(tagged.length),
        lastUpdated: latest?.updateTime,
        latestTag: latest === undefined ? undefined : tagToV1(latest),
      });
    },

    async listEolTags(req, ctx) {
      const page = await listMethod(ctx, pager, { input: EolTagFilterSchema, output: EolTagListSchema }, { ...req, orderBy: "", skip: 0 }, "items", {
        orderable: tagOrderable,
        validate: (v) => v.text("name", req.name, { max: 128, pattern: TAG_NAME }),
        read: (p, scope) => listTags(db, { name: req.name || undefined, deprecated: true, hiddenForms: hiddenForms(includedForms(req)), ...scope }, p),
        map: eolTagFromRow,
      });
      return page;
    },

    async listTagHistory(req) {
      new Violations().uid("parent_id", req.parentId).throwIfAny();
      let tag;
      try {
        tag = await getTag(db, req.parentId);
      } catch (error) {
        if (error instanceof NotFoundError) return create(TagHistoryListSchema);
        throw error;
      }
      const rows = await readTagHistory(db, tag.repo_uid, tag.name, {
        start: req.start ? timestampMs(req.start) : undefined,
        end: req.end ? timestampMs(req.end) : undefined,
        limit: HISTORY_LIMIT,
      });
      return create(TagHistoryListSchema, {
        items: rows.map((r) => create(TagHistorySchema, { updateTimestamp: toTimestamp(Number(r.update_time)), digest: r.digest })),
      });
    },

    getArchs: async (req, ctx) =>
      emptyIfMissing(create(ArchsSchema), async () => {
        const answer = await callV2(imageRpc.getImageArchitectures, images.getImageArchitectures, { repoUid: req.repoId, digest: req.digest }, ctx, IMAGE);
        return create(ArchsSchema, { archs: answer.architectures });
      }),

    getSize: async (req, ctx) =>
      emptyIfMissing(create(SizeSchema), async () => {
        const answer = await callV2(imageRpc.getImageSize, images.getImageSize, { repoUid: req.repoId, digest: req.digest, architecture: req.arch }, ctx, IMAGE);
        return create(SizeSchema, { size: answer.size, arch: answer.architecture });
      }),

    getVulnReport: async (req, ctx) =>
      emptyIfMissing(create(VulnReportSchema), async () =>
        vulnReportToV1(await callV2(imageRpc.getVulnerabilityReport, images.getVulnerabilityReport, { repoUid: req.repoId, digest: req.digest }, ctx, IMAGE)),
      ),

    async listVulnCountReports(req, ctx) {
      const tagged = await listAllOf({ id: "", uidp: req.uidp }, (uidp, page) => callV2(tagRpc.listTags, tags.listTags, { uidp, name: req.name, digest: req.digest, ...page }, ctx), (answer) => answer.tags);
      const reports = new Map<string, VulnerabilityReport | undefined>();
      const items = [];
      for (const tag of tagged) {
        const repoUid = parentOf(tag.uid) ?? "";
        const key = `${repoUid} ${tag.digest}`;
        if (!reports.has(key)) {
          reports.set(
            key,
            await emptyIfMissing(undefined, () => callV2(imageRpc.getVulnerabilityReport, images.getVulnerabilityReport, { repoUid, digest: tag.digest }, ctx)),
          );
        }
        const report = reports.get(key);
        // A tag whose image the repo does not hold has no report: it is left out.
        if (report !== undefined) items.push(vulnCountReportOf(tag, report));
      }
      return create(VulnCountReportListSchema, { items });
    },
  };
}

/** v1's answer for a missing resource (spec 9.3): `empty`, with HTTP 200, where v2 is NOT_FOUND. */
async function emptyIfMissing<T, E>(empty: E, read: () => Promise<T>): Promise<T | E> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof ApiError && error.kind === "NOT_FOUND") return empty;
    if (error instanceof NotFoundError) return empty;
    throw error;
  }
}
