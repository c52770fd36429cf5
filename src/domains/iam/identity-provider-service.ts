import type { ServiceImpl } from "@connectrpc/connect";
import { IdentityProviderSchema } from "../../../gen/platform/iam/v2/identity_provider_pb.js";
import { IdentityProvidersService } from "../../../gen/platform/iam/v2/identity_providers_service_pb.js";
import { applyFieldMask } from "../../aip/field-mask.js";
import { newChildUid } from "../../aip/uidp.js";
import { checkedCreate, checkedPatch, deleteMethod, getMethod, listMethod, nameFilter } from "../kit/standard-methods.js";
import { Violations } from "../../aip/validation.js";
import {
  deleteIdentityProvider,
  getIdentityProvider,
  identityProviderOrderable,
  insertIdentityProvider,
  listIdentityProviders,
  updateIdentityProvider,
} from "./store/identity-providers.js";
import { inTransaction } from "../../store/transaction.js";
import type { ServiceDeps } from "../kit/deps.js";
import { requireGrantableRole } from "./grantable-role.js";
import { identityProviderColumns, identityProviderFromRow, oidcOf } from "./identity-provider-mapper.js";
import { checkIdentityProviderFields, IDENTITY_PROVIDER_UPDATABLE } from "./identity-provider-validation.js";

/** IdentityProvidersService: OIDC providers of groups. The client secret is write-only. */
export function createIdentityProvidersService({ db, pager, now, secrets, allowHttpIssuers }: ServiceDeps): ServiceImpl<typeof IdentityProvidersService> {
  return {
    getIdentityProvider: (req) => getMethod(req.uid, (uid) => getIdentityProvider(db, uid), identityProviderFromRow),

    listIdentityProviders: (req, ctx) => listMethod(ctx, pager, IdentityProvidersService.method.listIdentityProviders, req, "identityProviders", {
      orderable: identityProviderOrderable,
      ...nameFilter(req.name, { max: 128 }, (filter, page) => listIdentityProviders(db, filter, page)),
      map: (row) => identityProviderFromRow(row),
    }),

    async createIdentityProvider(req, ctx) {
      const [idp] = checkedCreate(IdentityProviderSchema, req.identityProvider, req.parent, (violations, idp) =>
        checkIdentityProviderFields(violations, idp, { secretKept: false, allowHttpIssuers }),
      );
      const time = now();
      const row = { uid: newChildUid(req.parent), group_uid: req.parent, create_time: time, ...identityProviderColumns(idp, secrets.seal(oidcOf(idp)!.clientSecret), time) };
      return inTransaction(db, ctx.signal, async (trx) => {
        if (row.default_role_uid !== "") await requireGrantableRole(trx, ctx, row.default_role_uid, row.group_uid);
        await insertIdentityProvider(trx, row);
        return identityProviderFromRow(row);
      });
    },

    async updateIdentityProvider(req, ctx) {
      const patch = checkedPatch(IdentityProviderSchema, req.identityProvider, "identity_provider");
      return inTransaction(db, ctx.signal, async (trx) => {
        const stored = await getIdentityProvider(trx, patch.uid);
        const next = applyFieldMask(IdentityProviderSchema, identityProviderFromRow(stored), patch, req.updateMask, IDENTITY_PROVIDER_UPDATABLE);
        // An empty secret keeps the stored one, unless the mask names it (clearing it: a public client).
        const cleared = (req.updateMask?.paths ?? []).some((path) => path === "oidc.client_secret" || path === "oidc.clientSecret");
        const given = oidcOf(next)?.clientSecret ?? "";
        const secretKept = given === "" && !cleared && stored.client_secret !== "";
        const violations = new Violations();
        checkIdentityProviderFields(violations, next, { secretKept, allowHttpIssuers });
        violations.throwIfAny();
        const sealedSecret = given !== "" ? secrets.seal(given) : secretKept ? stored.client_secret : "";
        if (next.defaultRole !== "" && next.defaultRole !== stored.default_role_uid) {
          await requireGrantableRole(trx, ctx, next.defaultRole, stored.group_uid);
        }
        return identityProviderFromRow(await updateIdentityProvider(trx, stored.uid, identityProviderColumns(next, sealedSecret, now())));
      });
    },

    deleteIdentityProvider: (req, ctx) => deleteMethod(db, ctx, req.uid, deleteIdentityProvider),
  };
}
