import { create } from "@bufbuild/protobuf";
import { EmptySchema } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { RepoReadmeSchema, RepoSchema } from "../../../gen/platform/registry/v2/repo_pb.js";
import { ListReposRequestSchema, ListReposResponseSchema, ReposService } from "../../../gen/platform/registry/v2/repos_service_pb.js";
import { applyFieldMask } from "../../api/field-mask.js";
import { readPage } from "../../api/list.js";
import { newChildUid } from "../../api/uidp.js";
import { Violations } from "../../api/validation.js";
import { visibilityKey } from "../../auth/principal.js";
import { deleteRepo, getRepo, insertRepo, listRepos, repoOrderable, updateReadme, updateRepo } from "./store/repos.js";
import { inTransaction } from "../../store/transaction.js";
import type { ServiceDeps } from "../deps.js";
import { readmeFromRow, repoFromRow } from "./registry-mappers.js";
import { checkReadme, checkRepoFields, REPO_NAME } from "./registry-validation.js";

/** ReposService: image repositories of groups. Authorization ran in the interceptors. */
export function createReposService({ db, pager, now, ownership }: ServiceDeps): ServiceImpl<typeof ReposService> {
  return {
    async getRepo(req) {
      new Violations().uid("uid", req.uid).throwIfAny();
      return repoFromRow(await getRepo(db, req.uid));
    },

    async listRepos(req, ctx) {
      const page = await readPage({
        pager,
        schema: ListReposRequestSchema,
        request: req,
        orderable: repoOrderable,
        validate: (v) => v.text("name", req.name, { max: 255, pattern: REPO_NAME }),
        read: (p, uidp) => listRepos(db, { name: req.name || undefined, uidp, visible: ctx.values.get(visibilityKey) }, p),
        map: repoFromRow,
      });
      return create(ListReposResponseSchema, { repos: page.items, ...page });
    },

    async createRepo(req, ctx) {
      const repo = req.repo ?? create(RepoSchema);
      const violations = new Violations().uid("parent", req.parent);
      checkRepoFields(violations, repo);
      violations.throwIfAny();
      const time = now();
      const row = await inTransaction(db, ctx.signal, (trx) =>
        insertRepo(trx, {
          uid: newChildUid(req.parent),
          group_uid: req.parent,
          name: repo.name,
          description: repo.description,
          readme: "",
          create_time: time,
          update_time: time,
        }),
      );
      return repoFromRow(row);
    },

    async updateRepo(req, ctx) {
      const patch = req.repo ?? create(RepoSchema);
      new Violations().uid("repo.uid", patch.uid).throwIfAny();
      const row = await inTransaction(db, ctx.signal, async (trx) => {
        const current = repoFromRow(await getRepo(trx, patch.uid));
        const next = applyFieldMask(RepoSchema, current, patch, req.updateMask, ["name", "description"]);
        const violations = new Violations();
        checkRepoFields(violations, next);
        violations.throwIfAny();
        return updateRepo(trx, next.uid, { name: next.name, description: next.description, update_time: now() });
      });
      return repoFromRow(row);
    },

    async deleteRepo(req, ctx) {
      new Violations().uid("uid", req.uid).throwIfAny();
      await inTransaction(db, ctx.signal, (trx) => deleteRepo(trx, req.uid, ownership.deletedWithRepo));
      return create(EmptySchema);
    },

    async getRepoReadme(req) {
      new Violations().uid("uid", req.uid).throwIfAny();
      return readmeFromRow(await getRepo(db, req.uid));
    },

    async updateRepoReadme(req, ctx) {
      const patch = req.repoReadme ?? create(RepoReadmeSchema);
      new Violations().uid("repo_readme.uid", patch.uid).throwIfAny();
      const row = await inTransaction(db, ctx.signal, async (trx) => {
        const next = applyFieldMask(RepoReadmeSchema, readmeFromRow(await getRepo(trx, patch.uid)), patch, req.updateMask, ["content"]);
        const violations = new Violations();
        checkReadme(violations, next.content);
        violations.throwIfAny();
        return updateReadme(trx, patch.uid, next.content, now());
      });
      return readmeFromRow(row);
    },
  };
}
