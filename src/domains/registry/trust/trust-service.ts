import type { ServiceImpl } from "@connectrpc/connect";
import { TrustService } from "../../../../gen/platform/registry/v2/trust_service_pb.js";
import { TrustedKeySchema, TrustPolicySchema } from "../../../../gen/platform/registry/v2/trusted_key_pb.js";
import { newChildUid } from "../../../aip/uidp.js";
import { Violations } from "../../../aip/validation.js";
import { inTransaction } from "../../../store/transaction.js";
import { afterSmallTableWrite } from "../store/small-tables.js";
import type { ServiceDeps } from "../../kit/deps.js";
import { checkedCreate, checkedPatch, checkedUpdate, deleteMethod, getMethod, listMethod, nameFilter } from "../../kit/standard-methods.js";
import { deleteTrustedKey, getTrustedKey, insertTrustedKey, listTrustedKeys, trustedKeyOrderable, updateTrustedKey } from "./store/trusted-keys.js";
import { findTrustPolicy, writeTrustPolicy } from "./store/trust-policies.js";
import { trustedKeyFromRow } from "./trusted-key-mapper.js";
import { checkNewTrustedKey, checkTrustedKeyNames, TRUSTED_KEY_UPDATABLE } from "./trusted-key-validation.js";
import { trustPolicyFromRow, trustPolicyRow } from "./trust-policy-mapper.js";
import { checkTrustPolicy, TRUST_POLICY_UPDATABLE } from "./trust-policy-validation.js";
import { verifyWithNewKey } from "./verification.js";

/** TrustService: the keys groups trust and their trust policies. Authorization ran in the interceptors. */
export function createTrustService({ db, pager, now }: ServiceDeps): ServiceImpl<typeof TrustService> {
  return {
    getTrustedKey: (req) => getMethod(req.uid, (uid) => getTrustedKey(db, uid), trustedKeyFromRow),

    listTrustedKeys: (req, ctx) =>
      listMethod(ctx, pager, TrustService.method.listTrustedKeys, req, "trustedKeys", {
        orderable: trustedKeyOrderable,
        ...nameFilter(req.name, { max: 63 }, (filter, page) => listTrustedKeys(db, filter, page)),
        map: trustedKeyFromRow,
      }),

    async createTrustedKey(req, ctx) {
      const [key, parsed] = checkedCreate(TrustedKeySchema, req.trustedKey, req.parent, (violations, key) => checkNewTrustedKey(violations, key));
      return inTransaction(db, ctx.signal, async (trx) => {
        const time = now();
        const row = await insertTrustedKey(trx, {
          uid: newChildUid(req.parent),
          group_uid: req.parent,
          name: key.name,
          description: key.description,
          public_key_pem: parsed === undefined ? "" : key.publicKeyPem,
          algorithm: parsed?.algorithm ?? "keyless",
          fingerprint: parsed?.fingerprint ?? "",
          keyless_issuer: key.keyless?.issuer ?? "",
          keyless_subject: key.keyless?.subjectPattern ?? "",
          create_time: time,
          update_time: time,
        });
        // The signatures already pushed below the group: verified with the new key now (docs/decisions.md, "Supply-chain trust").
        await verifyWithNewKey(trx, row, time);
        return trustedKeyFromRow(row);
      });
    },

    async updateTrustedKey(req, ctx) {
      const patch = checkedPatch(TrustedKeySchema, req.trustedKey, "trusted_key");
      return inTransaction(db, ctx.signal, async (trx) => {
        const [next] = checkedUpdate(TrustedKeySchema, trustedKeyFromRow(await getTrustedKey(trx, patch.uid)), patch, req.updateMask, TRUSTED_KEY_UPDATABLE, (v, k) => checkTrustedKeyNames(v, k));
        return trustedKeyFromRow(await updateTrustedKey(trx, next.uid, { name: next.name, description: next.description, update_time: now() }));
      });
    },

    deleteTrustedKey: (req, ctx) => deleteMethod(db, ctx, req.uid, (trx, uid) => deleteTrustedKey(trx, uid)),

    async getTrustPolicy(req) {
      new Violations().uid("uid", req.uid).throwIfAny();
      return trustPolicyFromRow(req.uid, await findTrustPolicy(db, req.uid));
    },

    async updateTrustPolicy(req, ctx) {
      const patch = checkedPatch(TrustPolicySchema, req.trustPolicy, "trust_policy");
      return afterSmallTableWrite(inTransaction(db, ctx.signal, async (trx) => {
        const current = trustPolicyFromRow(patch.uid, await findTrustPolicy(trx, patch.uid));
        const [next] = checkedUpdate(TrustPolicySchema, current, patch, req.updateMask, TRUST_POLICY_UPDATABLE, (v, p) => checkTrustPolicy(v, p));
        return trustPolicyFromRow(patch.uid, await writeTrustPolicy(trx, trustPolicyRow(next, now())));
      }));
    },
  };
}
