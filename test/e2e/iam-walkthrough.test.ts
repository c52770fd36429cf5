import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { JsonObject } from "@bufbuild/protobuf";
import { GroupsService } from "../../gen/platform/iam/v2/groups_service_pb.js";
import { IdentitiesService } from "../../gen/platform/iam/v2/identities_service_pb.js";
import { RoleBindingsService } from "../../gen/platform/iam/v2/role_bindings_service_pb.js";
import { RolesService } from "../../gen/platform/iam/v2/roles_service_pb.js";
import { startOidcIssuer, type OidcIssuer } from "../support/oidc-issuer.js";
import { serveOverWires } from "../support/over-wires.js";
import { methodOf } from "../support/wires.js";

/**
 * The README's walkthrough, end to end: an owner sets up a folder, an identity
 * matching an external issuer's tokens, a custom role and a binding; the
 * workload exchanges its own token and reaches exactly what the binding allows,
 * over gRPC, Connect and REST.
 */

// The test issuer is plain http on loopback: the operator's allowance for it.
const served = serveOverWires({ upstreamIssuers: { allowHttp: true, allowPrivateAddresses: true } });
const { server } = served;
/** gRPC, Connect and REST, the walkthrough's protocols. */
const wires = () => (["grpc", "connect", "rest"] as const).map(served.wire);
let issuer: OidcIssuer;

before(async () => {
  issuer = await startOidcIssuer();
});
after(() => issuer.close());

test("a workload identity reaches exactly what its binding allows, on every protocol", async () => {
  const [grpc, connect, rest] = wires();
  const ok = (out: { code: number; body?: JsonObject; message?: string }) => {
    assert.equal(out.code, 0, out.message);
    return out.body!;
  };
  const owner = server().ownerToken;
  const org = server().org.uid;

  const folder = ok(await connect.call(methodOf(GroupsService, "CreateGroup"), { parent: org, group: { name: "builds" } }, { method: "POST", path: "" }, owner));
  const sub = ok(await rest.call(methodOf(GroupsService, "CreateGroup"), {}, { method: "POST", path: `/iam/v2/groups/${folder.uid}`, body: { name: "nightly" } }, owner));
  const identity = ok(
    await grpc.call(
      methodOf(IdentitiesService, "CreateIdentity"),
      { parent: org, identity: { name: "ci", claimMatch: { issuer: issuer.url, subjectPattern: "repo:acme/app:ref:refs/heads/.*" } } },
      { method: "POST", path: "" },
      owner,
    ),
  );
  const role = ok(
    await rest.call(methodOf(RolesService, "CreateRole"), {}, { method: "POST", path: `/iam/v2/roles/${org}`, body: { name: "folder-reader", capabilities: ["CAP_IAM_GROUPS_LIST"] } }, owner),
  );
  const binding = ok(
    await rest.call(methodOf(RoleBindingsService, "CreateRoleBinding"), {}, { method: "POST", path: `/iam/v2/roleBindings/${folder.uid}`, body: { identityUid: identity.uid, roleUid: role.uid } }, owner),
  );
  assert.equal((binding.identity as JsonObject).issuer, issuer.url, "the binding is hydrated");
  assert.equal((binding.role as JsonObject).name, "folder-reader");

  const upstream = await issuer.issue({ sub: "repo:acme/app:ref:refs/heads/main", aud: "platform" });
  const exchanged = await fetch(`${server().apiUrl}/sts/exchange?identity=${encodeURIComponent(identity.uid as string)}&aud=${encodeURIComponent("http://api.test")}`, {
    method: "POST",
    headers: { authorization: `Bearer ${upstream}` },
  });
  assert.equal(exchanged.status, 200);
  const { token } = (await exchanged.json()) as { token: string };

  for (const wire of wires()) {
    const get = (uid: string) => wire.call(methodOf(GroupsService, "GetGroup"), { uid }, { method: "GET", path: `/iam/v2/groups/${uid}` }, token);
    assert.equal((await get(folder.uid as string)).code, 0, `${wire.name}: the bound folder`);
    assert.equal((await get(sub.uid as string)).code, 0, `${wire.name}: below the bound folder`);
    assert.equal((await get(org)).code, 7, `${wire.name}: not the organization`);
    const list = await wire.call(methodOf(GroupsService, "ListGroups"), {}, { method: "GET", path: "/iam/v2/groups" }, token);
    assert.deepEqual(((list.body?.groups as JsonObject[]) ?? []).map((g) => g.uid).sort(), [folder.uid, sub.uid].sort(), wire.name);
    assert.equal(list.body?.totalCount, "2");
    const create = await wire.call(methodOf(GroupsService, "CreateGroup"), { parent: folder.uid, group: { name: "x" } }, { method: "POST", path: `/iam/v2/groups/${folder.uid}`, body: { name: "x" } }, token);
    assert.equal(create.code, 7, `${wire.name}: the role grants no CREATE`);
    const identities = await wire.call(methodOf(IdentitiesService, "ListIdentities"), {}, { method: "GET", path: "/iam/v2/identities" }, token);
    assert.equal(identities.code, 0);
    assert.equal(identities.body?.totalCount, "0", `${wire.name}: nothing else is visible`);
  }

  const wrong = await issuer.issue({ sub: "repo:acme/other:ref:refs/heads/main" });
  const refused = await fetch(`${server().apiUrl}/sts/exchange?identity=${encodeURIComponent(identity.uid as string)}`, { method: "POST", headers: { authorization: `Bearer ${wrong}` } });
  assert.equal(refused.status, 401);
});
