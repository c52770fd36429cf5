import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { Auth, ProfileSchema, SessionSchema, WhoAmI_CapabilitySchema, WhoAmISchema } from "../../../gen/platform/auth/v1/auth_pb.js";
import { GroupSchema } from "../../../gen/platform/iam/v1/group_pb.js";
import { RoleSchema } from "../../../gen/platform/iam/v1/role_pb.js";
import { invalidField, unauthenticated } from "../../aip/errors.js";
import { toTimestamp } from "../../aip/time.js";
import { Violations } from "../../aip/validation.js";
import { capabilityOfString, capabilityString } from "../../access/capabilities.js";
import { principalKey, scopeKey } from "../../access/principal.js";
import type { ServiceDeps } from "../kit/deps.js";
import { bindingsOfIdentity, redeemInviteOnce } from "../iam/index.js";

/** Auth: who the caller is (Validate) and a person's registration by invite (Register). */
export function createAuthService({ db, now }: ServiceDeps): ServiceImpl<typeof Auth> {
  return {
    async validate(_req, ctx) {
      const caller = ctx.values.get(principalKey);
      if (!caller?.token) throw unauthenticated("this call needs `Authorization: Bearer <token>`");
      const bindings = caller.unregistered ? [] : await bindingsOfIdentity(db, caller.identityUid);
      return create(WhoAmISchema, {
        issuer: caller.token.issuer,
        subject: caller.identityUid,
        audience: caller.token.audience,
        expiry: toTimestamp(caller.token.expiry),
        issuedAt: toTimestamp(caller.token.issuedAt),
        email: caller.person?.email ?? "",
        profile: caller.person?.name ? create(ProfileSchema, { name: caller.person.name }) : undefined,
        capabilities: bindings.map(({ group, role }) =>
          create(WhoAmI_CapabilitySchema, {
            group: create(GroupSchema, { id: group.uid, name: group.name, description: group.description }),
            role: create(RoleSchema, { id: role.uid, name: role.name, description: role.description, capabilities: stringForms(role.capabilities) }),
            capabilities: stringForms(role.capabilities),
          }),
        ),
      });
    },

    async register(req, ctx) {
      const caller = ctx.values.get(principalKey);
      if (!caller) throw unauthenticated("registering needs `Authorization: Bearer <token>`");
      const violations = new Violations().text("code", req.code, { required: true, max: 128 });
      violations.throwIfAny();
      if (req.identityId !== "" && req.identityId !== caller.identityUid) throw invalidField("identity_id", "must be empty or the caller's own identity");
      // A second registration with the same code answers the same Session and changes nothing: no event.
      return redeemInviteOnce(db, ctx.signal, caller, req.code, now(), (done) => {
        // The event's group: the one the person joined.
        ctx.values.set(scopeKey, done.groupUid);
        return create(SessionSchema, { identity: done.identityUid, group: done.groupUid });
      });
    },
  };
}

/** Capability names (`CAP_REPO_LIST`) in the string form WhoAmI shows (`repo.list`), as hosted. */
function stringForms(names: readonly string[]): string[] {
  return names.flatMap((name) => {
    const cap = capabilityOfString(name);
    return cap === undefined ? [] : [capabilityString(cap)];
  });
}
