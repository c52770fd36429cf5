import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { GroupsService } from "../../gen/platform/iam/v2/groups_service_pb.js";
import { IdentitiesService } from "../../gen/platform/iam/v2/identities_service_pb.js";
import { RoleBindingsService } from "../../gen/platform/iam/v2/role_bindings_service_pb.js";
import { builtInRole } from "../../src/access/capabilities.js";
import type { OrganizationCreation } from "../../src/config.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { allWires, methodOf, reasonOf, restWire, type Wire } from "../support/wires.js";

/** Who may create an organization over the API: the operator's `--org-creation` (default: nobody; the CLI bootstrap does). */

/** Servers close together at the end (a close waits for the clients' idle keep-alive connections). */
const closing: Promise<void>[] = [];
after(() => Promise.all(closing));

const createOrg = (wire: Wire, name: string, token: string) =>
  wire.call(methodOf(GroupsService, "CreateGroup"), { parent: "", group: { name } }, { method: "POST", path: "/iam/v2/groups", body: { name } }, token);

/** A server, and the token of an identity created under a folder of its organization and owning that folder. */
async function serverWithFolderOwner(organizationCreation?: OrganizationCreation) {
  const server = await startTestServer(organizationCreation ? { organizationCreation } : {});
  const rest = restWire(server.apiPort);
  const ok = <T extends { code: number; message?: string }>(out: T) => (assert.equal(out.code, 0, out.message), out);
  const folder = ok(
    await rest.call(methodOf(GroupsService, "CreateGroup"), {}, { method: "POST", path: `/iam/v2/groups/${server.org.uid}`, body: { name: "team" } }, server.ownerToken),
  ).body!.uid as string;
  const identity = ok(
    await rest.call(methodOf(IdentitiesService, "CreateIdentity"), {}, { method: "POST", path: `/iam/v2/identities/${folder}`, body: { name: "team-admin" } }, server.ownerToken),
  ).body!.uid as string;
  ok(
    await rest.call(
      methodOf(RoleBindingsService, "CreateRoleBinding"),
      {},
      { method: "POST", path: `/iam/v2/roleBindings/${folder}`, body: { identityUid: identity, roleUid: builtInRole("owner").uid } },
      server.ownerToken,
    ),
  );
  const folderOwnerToken = (await server.server.tokens.issue({ subject: identity, audience: "http://api.test" })).token;
  return { server, folderOwnerToken };
}

describe("by default (--org-creation bootstrap)", () => {
  let server: TestServer;
  let folderOwnerToken: string;
  let wires: Wire[];
  before(async () => {
    ({ server, folderOwnerToken } = await serverWithFolderOwner());
    wires = allWires(server.apiPort);
  });
  after(() => {
    for (const wire of wires) wire.close();
    closing.push(server.close());
  });

  test("an identity confined to a folder cannot create an organization (PERMISSION_DENIED) on any wire", async () => {
    for (const wire of wires) {
      const out = await createOrg(wire, `escape-${wire.name}`, folderOwnerToken);
      assert.equal(out.code, 7, `${wire.name}: ${out.message}`);
      assert.equal(reasonOf(out), "PERMISSION_DENIED");
      if (wire.name === "rest") assert.equal(out.httpStatus, 403);
      assert.match(out.message ?? "", /platform-api bootstrap/);
    }
  });

  test("nor can the organization's own owner: organizations come from the operator's CLI", async () => {
    for (const wire of wires) assert.equal((await createOrg(wire, `second-${wire.name}`, server.ownerToken)).code, 7, wire.name);
    const listed = await restWire(server.apiPort).call(methodOf(GroupsService, "ListGroups"), {}, { method: "GET", path: "/iam/v2/groups?uidp.inRoot=true" }, server.ownerToken);
    assert.deepEqual(
      (listed.body?.groups as Array<{ name: string }>).map((g) => g.name),
      ["acme"],
      "no organization was created",
    );
  });

  test("folders are still created by whoever holds the capability", async () => {
    const out = await wires[0].call(methodOf(GroupsService, "CreateGroup"), { parent: server.org.uid, group: { name: "still fine" } }, { method: "POST", path: "" }, server.ownerToken);
    assert.equal(out.code, 0, out.message);
  });
});

describe("with --org-creation anyone", () => {
  test("any verified caller, even one confined to a folder, creates an organization and owns it", async () => {
    const { server, folderOwnerToken } = await serverWithFolderOwner("anyone");
    try {
      const rest = restWire(server.apiPort);
      const made = await createOrg(rest, "opened", folderOwnerToken);
      assert.equal(made.code, 0, made.message);
      const uid = made.body!.uid as string;
      const read = await rest.call(methodOf(GroupsService, "GetGroup"), { uid }, { method: "GET", path: `/iam/v2/groups/${uid}` }, folderOwnerToken);
      assert.equal(read.code, 0, read.message);
    } finally {
      closing.push(server.close());
    }
  });
});
