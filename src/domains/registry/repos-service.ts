import type { ServiceImpl } from "@connectrpc/connect";
import { RepoReadmeSchema, RepoSchema } from "../../../gen/platform/registry/v2/repo_pb.js";
import { ReposService } from "../../../gen/platform/registry/v2/repos_service_pb.js";
import { newChildUid } from "../../aip/uidp.js";
import { checkedCreate, checkedPatch, checkedUpdate, deleteMethod, getMethod, listMethod, nameFilter } from "../kit/standard-methods.js";
import { deleteRepo, getRepo, insertRepo, listRepos, repoOrderable, updateReadme, updateRepo } from "./store/repos.js";
import { inTransaction } from "../../store/transaction.js";
import type { ServiceDeps } from "../kit/deps.js";
import { principalKey } from "../../access/principal.js";
import { immutableTagsColumn, requireUnlock } from "./immutable-tags.js";
import { readmeFromRow, repoFromRow } from "./repo-mapper.js";
import { checkReadme, checkRepoFields, REPO_NAME } from "./repo-validation.js";

/** ReposService: image repositories of groups. Authorization ran in the interceptors. */
export function createReposService({ db, pager, now, ownership }: ServiceDeps): ServiceImpl<typeof ReposService> {
  return {
    getRepo: (req) => getMethod(req.uid, (uid) => getRepo(db, uid), repoFromRow),

    listRepos: (req, ctx) => listMethod(ctx, pager, ReposService.method.listRepos, req, "repos", {
      orderable: repoOrderable,
      ...nameFilter(req.name, { max: 255, pattern: REPO_NAME }, (filter, page) => listRepos(db, filter, page)),
      map: repoFromRow,
    }),

    async createRepo(req, ctx) {
      const [repo] = checkedCreate(RepoSchema, req.repo, req.parent, checkRepoFields);
      const time = now();
      const row = {
        uid: newChildUid(req.parent),
        group_uid: req.parent,
        name: repo.name,
        description: repo.description,
        readme: "",
        immutable_tags: immutableTagsColumn(repo.immutableTags),
        create_time: time,
        update_time: time,
      };
      return inTransaction(db, ctx.signal, async (trx) => repoFromRow(await insertRepo(trx, row)));
    },

    async updateRepo(req, ctx) {
      const patch = checkedPatch(RepoSchema, req.repo, "repo");
      return inTransaction(db, ctx.signal, async (trx) => {
        const stored = await getRepo(trx, patch.uid);
        const current = repoFromRow(stored);
        const [next] = checkedUpdate(RepoSchema, current, patch, req.updateMask, ["name", "description", "immutable_tags"], checkRepoFields);
        requireUnlock(ctx.values.get(principalKey), stored.group_uid, current.immutableTags, next.immutableTags);
        const change = { name: next.name, description: next.description, immutable_tags: immutableTagsColumn(next.immutableTags), update_time: now() };
        return repoFromRow(await updateRepo(trx, next.uid, change));
      });
    },

    deleteRepo: (req, ctx) => deleteMethod(db, ctx, req.uid, (trx, uid) => deleteRepo(trx, uid, ownership.deletedWithRepo)),

    getRepoReadme: (req) => getMethod(req.uid, (uid) => getRepo(db, uid), readmeFromRow),

    async updateRepoReadme(req, ctx) {
      const patch = checkedPatch(RepoReadmeSchema, req.repoReadme, "repo_readme");
      return inTransaction(db, ctx.signal, async (trx) => {
        const current = readmeFromRow(await getRepo(trx, patch.uid));
        const [next] = checkedUpdate(RepoReadmeSchema, current, patch, req.updateMask, ["content"], (violations, next) => checkReadme(violations, next.content));
        return readmeFromRow(await updateReadme(trx, patch.uid, next.content, now()));
      });
    },
  };
}
