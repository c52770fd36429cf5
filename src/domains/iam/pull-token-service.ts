import { randomBytes } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { durationMs, timestampFromMs } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { PullTokenCredentialsSchema, PullTokensService } from "../../../gen/platform/iam/v2/pull_tokens_service_pb.js";
import { newChildUid } from "../../aip/uidp.js";
import { Violations } from "../../aip/validation.js";
import { builtInRole } from "../../access/capabilities.js";
import { principalKey } from "../../access/principal.js";
import { inTransaction } from "../../store/transaction.js";
import type { ServiceDeps } from "../kit/deps.js";
import { identityFromRow } from "./identity-mapper.js";
import { newPassword, passwordHash } from "./pull-token-passwords.js";
import { checkBindingScope } from "./role-binding-validation.js";
import { requireGrantable } from "./role-validation.js";
import { createIdentity } from "./store/identities.js";
import { createRoleBinding } from "./store/role-bindings.js";
import { getRole } from "./store/roles.js";

const HOUR_MS = 3_600_000;
/** A pull token's lifetime when none is asked for: 30 days, as the hosted service's. */
export const DEFAULT_PULL_TOKEN_TTL_MS = 720 * HOUR_MS;
/** The longest lifetime: a year, as the hosted service's. */
export const MAX_PULL_TOKEN_TTL_MS = 8_760 * HOUR_MS;
const MIN_PULL_TOKEN_TTL_MS = 60_000;

/**
 * PullTokensService: an identity at `parent` whose password the registry host accepts, bound to
 * `registry.pull` (or a role the caller could bind anyway), in one transaction. The interceptor
 * checked `registry.pull_tokens.create` on `parent`.
 */
export function createPullTokensService({ db, now }: ServiceDeps): ServiceImpl<typeof PullTokensService> {
  return {
    async createPullToken(req, ctx) {
      const violations = new Violations().parent("parent", req.parent);
      violations.name("name", req.name, { max: 128 });
      violations.description("description", req.description);
      if (req.roleUid !== "") violations.uid("role_uid", req.roleUid);
      const ttlMs = req.ttl ? durationMs(req.ttl) : DEFAULT_PULL_TOKEN_TTL_MS;
      if (ttlMs < MIN_PULL_TOKEN_TTL_MS || ttlMs > MAX_PULL_TOKEN_TTL_MS) violations.add("ttl", "must be between 1 minute and 8760 hours");
      violations.throwIfAny();

      const pullRole = builtInRole("registry.pull").uid;
      const roleUid = req.roleUid || pullRole;
      const time = now();
      const password = newPassword();
      const uid = newChildUid(req.parent);
      checkBindingScope(req.parent, uid, roleUid);
      return inTransaction(db, ctx.signal, async (trx) => {
        const role = await getRole(trx, roleUid);
        // `registry.pull` is what the capability hands out; any other role follows CreateRoleBinding's rule.
        if (role.uid !== pullRole) requireGrantable(ctx.values.get(principalKey), req.parent, role.capabilities, `binding role ${role.uid}`);
        const expireTime = time + ttlMs;
        const row = await createIdentity(trx, {
          uid,
          group_uid: req.parent,
          name: req.name || `pull-token-${randomBytes(4).toString("hex")}`,
          description: req.description,
          claim_match: "",
          static_keys: "",
          pull_token_hash: passwordHash(password),
          pull_token_expire_time: expireTime,
          last_seen_time: null,
          create_time: time,
          update_time: time,
        });
        const bindingUid = newChildUid(req.parent);
        await createRoleBinding(trx, { uid: bindingUid, group_uid: req.parent, identity_uid: uid, role_uid: role.uid, create_time: time });
        return create(PullTokenCredentialsSchema, { uid, identity: identityFromRow(row), username: uid, password, expireTime: timestampFromMs(expireTime), roleBindingUid: bindingUid });
      });
    },
  };
}

