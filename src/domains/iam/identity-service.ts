import type { ServiceImpl } from "@connectrpc/connect";
import { IdentitiesService } from "../../../gen/platform/iam/v2/identities_service_pb.js";
import { IdentitySchema, type Identity } from "../../../gen/platform/iam/v2/identity_pb.js";
import { newChildUid } from "../../aip/uidp.js";
import { checkedCreate, checkedPatch, checkedUpdate, deleteMethod, getMethod, listMethod, nameFilter } from "../kit/standard-methods.js";
import {
  createIdentity,
  deleteIdentity,
  getIdentity,
  identityOrderable,
  listIdentities,
  updateIdentity,
} from "./store/identities.js";
import { inTransaction } from "../../store/transaction.js";
import type { ServiceDeps } from "../kit/deps.js";
import { identityFromRow, relationshipColumns } from "./identity-mapper.js";
import { checkIdentityFields } from "./identity-validation.js";

/**
 * What a PATCH may change: the oneof `relationship`'s members are fields like any other (a leaf such
 * as `claim_match.subject` changes that leaf; naming a member the patch leaves unset clears it, and
 * setting the other member replaces it); `pull_token` is output only.
 */
const IDENTITY_UPDATABLE = ["name", "description", "claim_match", "static_keys"];

const PULL_TOKENS_ELSEWHERE = "is output only: pull tokens are made by PullTokensService.CreatePullToken";

/** The issuer of an identity's claim match or static keys ("" for none or a pattern). */
function issuerOf(identity: Identity): string {
  const rel = identity.relationship;
  return rel.case === "claimMatch" || rel.case === "staticKeys" ? rel.value.issuer : "";
}

/** IdentitiesService: identities of groups. Authorization ran in the interceptors. */
export function createIdentitiesService({ db, pager, now, allowHttpIssuers }: ServiceDeps): ServiceImpl<typeof IdentitiesService> {
  return {
    getIdentity: (req) => getMethod(req.uid, (uid) => getIdentity(db, uid), identityFromRow),

    listIdentities: (req, ctx) => listMethod(ctx, pager, IdentitiesService.method.listIdentities, req, "identities", {
      orderable: identityOrderable,
      ...nameFilter(req.name, { max: 128 }, (filter, page) => listIdentities(db, filter, page)),
      map: identityFromRow,
    }),

    async createIdentity(req, ctx) {
      const [identity] = checkedCreate(IdentitySchema, req.identity, req.parent, (violations, identity) => {
        checkIdentityFields(violations, identity, { allowHttp: allowHttpIssuers });
        if (identity.relationship.case === "pullToken") violations.add("identity.pull_token", PULL_TOKENS_ELSEWHERE);
      });
      const time = now();
      const row = {
        uid: newChildUid(req.parent),
        group_uid: req.parent,
        name: identity.name,
        description: identity.description,
        ...relationshipColumns(identity),
        last_seen_time: time,
        create_time: time,
        update_time: time,
      };
      return inTransaction(db, ctx.signal, async (trx) => identityFromRow(await createIdentity(trx, row)));
    },

    async updateIdentity(req, ctx) {
      const patch = checkedPatch(IdentitySchema, req.identity, "identity");
      return inTransaction(db, ctx.signal, async (trx) => {
        const current = identityFromRow(await getIdentity(trx, patch.uid));
        const [next] = checkedUpdate(IdentitySchema, current, patch, req.updateMask, IDENTITY_UPDATABLE, (violations, next) => {
          if ((current.relationship.case === "pullToken") !== (next.relationship.case === "pullToken")) {
            violations.add("identity.pull_token", current.relationship.case === "pullToken" ? "a pull token stays one: delete it and create another identity" : PULL_TOKENS_ELSEWHERE);
          }
          checkIdentityFields(violations, next, { allowHttp: allowHttpIssuers, kept: issuerOf(current) });
        });
        return identityFromRow(await updateIdentity(trx, next.uid, { name: next.name, description: next.description, ...relationshipColumns(next), update_time: now() }));
      });
    },

    deleteIdentity: (req, ctx) => deleteMethod(db, ctx, req.uid, deleteIdentity),
  };
}
