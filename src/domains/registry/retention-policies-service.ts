import type { ServiceImpl } from "@connectrpc/connect";
import { RetentionPolicySchema } from "../../../gen/platform/registry/v2/retention_policy_pb.js";
import { RetentionPoliciesService } from "../../../gen/platform/registry/v2/retention_policies_service_pb.js";
import { isSelfOrDescendant, newChildUid } from "../../aip/uidp.js";
import { Violations } from "../../aip/validation.js";
import { inTransaction } from "../../store/transaction.js";
import type { ServiceDeps } from "../kit/deps.js";
import { checkedCreate, checkedPatch, checkedUpdate, deleteMethod, getMethod, listMethod } from "../kit/standard-methods.js";
import { retentionPolicyFromRow, retentionRulesColumns } from "./retention-policy-mapper.js";
import { checkRetentionRules } from "./retention-policy-validation.js";
import { getRepo } from "./store/repos.js";
import {
  deleteRetentionPolicy,
  getRetentionPolicy,
  insertRetentionPolicy,
  listRetentionPolicies,
  retentionPolicyOrderable,
  updateRetentionPolicy,
} from "./store/retention-policies.js";

/** The rules UpdateRetentionPolicy may change. */
const RULES = ["keep_last", "keep_tags", "expire_after", "untagged_grace"];

/** RetentionPoliciesService: the rules by which old tags and untagged manifests go. Authorization ran in the interceptors. */
export function createRetentionPoliciesService({ db, pager, now }: ServiceDeps): ServiceImpl<typeof RetentionPoliciesService> {
  return {
    getRetentionPolicy: (req) => getMethod(req.uid, (uid) => getRetentionPolicy(db, uid), retentionPolicyFromRow),

    listRetentionPolicies: (req, ctx) => listMethod(ctx, pager, RetentionPoliciesService.method.listRetentionPolicies, req, "retentionPolicies", {
      orderable: retentionPolicyOrderable,
      validate: (v) => v.uid("repo_uid", req.repoUid, false),
      read: (page, scope) => listRetentionPolicies(db, { repoUid: req.repoUid || undefined, ...scope }, page),
      map: retentionPolicyFromRow,
    }),

    async createRetentionPolicy(req, ctx) {
      const [policy] = checkedCreate(RetentionPolicySchema, req.retentionPolicy, req.parent, (violations, policy) =>
        checkRetentionRules(violations.uid("retention_policy.repo_uid", policy.repoUid, false), policy),
      );
      return inTransaction(db, ctx.signal, async (trx) => {
        if (policy.repoUid !== "") {
          const repo = await getRepo(trx, policy.repoUid);
          if (!isSelfOrDescendant(repo.group_uid, req.parent)) new Violations().add("retention_policy.repo_uid", `must name a repo at or below the group ${req.parent}`).throwIfAny();
        }
        const time = now();
        const row = { uid: newChildUid(req.parent), group_uid: req.parent, repo_uid: policy.repoUid, ...retentionRulesColumns(policy), create_time: time, update_time: time };
        return retentionPolicyFromRow(await insertRetentionPolicy(trx, row));
      });
    },

    async updateRetentionPolicy(req, ctx) {
      const patch = checkedPatch(RetentionPolicySchema, req.retentionPolicy, "retention_policy");
      return inTransaction(db, ctx.signal, async (trx) => {
        const [next] = checkedUpdate(RetentionPolicySchema, retentionPolicyFromRow(await getRetentionPolicy(trx, patch.uid)), patch, req.updateMask, RULES, checkRetentionRules);
        return retentionPolicyFromRow(await updateRetentionPolicy(trx, next.uid, { ...retentionRulesColumns(next), update_time: now() }));
      });
    },

    deleteRetentionPolicy: (req, ctx) => deleteMethod(db, ctx, req.uid, (trx, uid) => deleteRetentionPolicy(trx, uid)),
  };
}
