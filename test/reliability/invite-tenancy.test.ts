import assert from "node:assert/strict";
import { test } from "node:test";
import type { JsonObject } from "@bufbuild/protobuf";
import { GroupInvitesService } from "../../gen/platform/iam/v2/group_invites_service_pb.js";
import { GroupsService } from "../../gen/platform/iam/v2/groups_service_pb.js";
import { newChildUid } from "../../src/aip/uidp.js";
import { builtInRole } from "../../src/access/capabilities.js";
import { bootstrapOrganization } from "../../src/server/bootstrap.js";
import { insertIdentity } from "../../src/domains/iam/store/identities.js";
import { serveOverWires } from "../support/over-wires.js";
import type { TestServer } from "../support/test-server.js";
import { detailOf, methodOf, reasonOf } from "../support/wires.js";

/**
 * An invite code binds its redeemer by the rule of CreateRoleBinding: an identity created under
 * another organization cannot join (IDENTITY_OUT_OF_SCOPE), however it got the code, and the code
 * is not used up by the attempt.
 */
let stranger: string;

/** Another organization, whose owner's token is `stranger`. */
async function prepare(server: TestServer): Promise<void> {
  const other = await bootstrapOrganization(server.store, "other", Date.now());
  stranger = (await server.server.tokens.issue({ subject: other.identity.uid, audience: "http://api.test" })).token;
}

const { server, wires } = serveOverWires({ logLevel: "silent", prepare });

async function member(): Promise<string> {
  const uid = newChildUid(server().org.uid);
  await insertIdentity(server().store.db, { uid, group_uid: server().org.uid, name: "member", description: "", claim_match: "", static_keys: "", last_seen_time: null, create_time: 1, update_time: 1 });
  return (await server().server.tokens.issue({ subject: uid, audience: "http://api.test" })).token;
}

test("another organization's identity redeeming a code is refused on every wire; the code still works for its own", async () => {
  for (const wire of wires()) {
    const body = { roleUid: builtInRole("viewer").uid, singleUse: true, ttl: "3600s" };
    const made = await wire.call(methodOf(GroupInvitesService, "CreateGroupInvite"), { parent: server().org.uid, groupInvite: body }, { method: "POST", path: `/iam/v2/groupInvites/${server().org.uid}`, body }, server().ownerToken);
    assert.equal(made.code, 0, made.message);
    const code = made.body!.code as string;
    const redeem = (token: string) => wire.call(methodOf(GroupInvitesService, "RedeemGroupInvite"), { code }, { method: "POST", path: "/iam/v2/groupInvites:redeem", body: { code } }, token);
    const refused = await redeem(stranger);
    assert.equal(refused.code, 9, `${wire.name}: ${refused.message}`);
    assert.equal(reasonOf(refused), "FAILED_PRECONDITION");
    assert.equal(((detailOf(refused, "PreconditionFailure")?.violations as JsonObject[])[0]).type, "IDENTITY_OUT_OF_SCOPE");
    const read = await wire.call(methodOf(GroupsService, "GetGroup"), { uid: server().org.uid }, { method: "GET", path: `/iam/v2/groups/${server().org.uid}` }, stranger);
    assert.equal(read.code, 7, "the stranger still cannot read the organization");
    assert.equal((await redeem(await member())).code, 0, "the single-use code was not used up");
  }
});
