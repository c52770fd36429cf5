import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { JsonObject } from "@bufbuild/protobuf";
import { MembersService } from "../../gen/platform/iam/v2/members_service_pb.js";
import { builtInRole } from "../../src/access/capabilities.js";
import { serverWidePersonUid } from "../../src/access/person-token.js";
import { newChildUid } from "../../src/aip/uidp.js";
import { bindRole, insertGroup, insertIdentity, signInToOrganization } from "../../src/domains/iam/index.js";
import { testDatabases } from "../support/databases.js";
import { serveOverWires } from "../support/over-wires.js";
import type { TestServer } from "../support/test-server.js";
import { methodOf, queryString, type Outcome, type Wire } from "../support/wires.js";

/**
 * ListMembers: the identities bound on a group or above it, each with the bindings that apply
 * there (direct, or inherited from a group above), over gRPC, Connect, gRPC-Web and REST on SQLite
 * and PostgreSQL: a folder below the organization and a folder below that, pages walked to the
 * end, the kinds of identity told apart, callers without the capability at the group refused.
 */

const listMembers = methodOf(MembersService, "ListMembers");

interface MemberJson {
  uid: string;
  name: string;
  kind: string;
  issuer?: string;
  subject?: string;
  roleBindings?: Array<{ uid: string; role: { name: string }; group: { uid: string; name: string }; inherited?: boolean }>;
}

interface Tree {
  org: string;
  folder: string;
  subfolder: string;
  owner: string;
  workload: string;
  keys: string;
  pullToken: string;
  person: string;
  orgPerson: string;
  fillers: string[];
  belowOnly: string;
  unbound: string;
  /** Callers: viewer on the subfolder only; registry.pull on the organization. */
  subfolderViewer: { uid: string; token: string };
  puller: { uid: string; token: string };
}

/** A ListMembers request as proto JSON from its REST query: `a.b` keys nested, `true` a boolean. */
function requestOf(parent: string, query: Record<string, string | number>): JsonObject {
  const request: JsonObject = { parent };
  for (const [key, value] of Object.entries(query)) {
    const [head, field] = key.split(".");
    const json = value === "true" ? true : value;
    if (field === undefined) request[head] = json;
    else request[head] = { ...((request[head] as JsonObject | undefined) ?? {}), [field]: json };
  }
  return request;
}

/** The groups, identities and bindings every case reads (nothing is written after). */
async function plant(server: TestServer): Promise<Tree> {
  const db = server.store.db;
  const now = Date.now();
  const org = server.org.uid;
  const folder = newChildUid(org);
  const subfolder = newChildUid(folder);
  await insertGroup(db, { uid: folder, parent_uid: org, name: "team", description: "the team", create_time: now, update_time: now });
  await insertGroup(db, { uid: subfolder, parent_uid: folder, name: "project", description: "", create_time: now, update_time: now });
  const role = (name: Parameters<typeof builtInRole>[0]) => builtInRole(name).uid;
  async function identity(group: string, name: string, columns: Partial<{ claim_match: string; static_keys: string; pull_token_hash: string; pull_token_expire_time: number; uid: string }> = {}) {
    const uid = columns.uid ?? newChildUid(group);
    const { uid: _, ...rest } = columns;
    await insertIdentity(db, { uid, group_uid: group, name, description: `${name} here`, claim_match: "", static_keys: "", last_seen_time: null, create_time: now, update_time: now, ...rest });
    return uid;
  }

  const workload = await identity(org, "ci workload", { claim_match: JSON.stringify({ issuer: "https://ci.example", subjectPattern: "repo:acme/.*" }) });
  await bindRole(db, org, workload, role("viewer"), now);
  const keys = await identity(org, "signer", { static_keys: JSON.stringify({ issuer: "https://keys.example", subject: "signer", issuerKeys: { keys: [] } }) });
  await bindRole(db, folder, keys, role("editor"), now);
  const pullToken = await identity(folder, "puller token", { pull_token_hash: "0".repeat(64), pull_token_expire_time: now + 3_600_000 });
  await bindRole(db, folder, pullToken, role("registry.pull"), now);

  // A person of the server's login: a root-level identity, bound on the organization and on the folder.
  const ada = { issuer: "https://login.example", subject: "ada" };
  const person = await identity("", "ada", { uid: serverWidePersonUid(ada), claim_match: JSON.stringify(ada) });
  await bindRole(db, org, person, role("editor"), now);
  await bindRole(db, folder, person, role("viewer"), now);

  // A person of the organization's identity provider, signed in as a login does it.
  const idp = { name: "corporate sso", oidc: { issuer: "https://sso.example", clientId: "c", clientSecret: "s" } };
  const made = await fetch(`${server.apiUrl}/iam/v2/identityProviders/${org}`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.ownerToken}`, "content-type": "application/json" },
    body: JSON.stringify(idp),
  });
  const provider = (await made.json()) as { uid: string };
  assert.equal(made.status, 200, JSON.stringify(provider));
  const orgPerson = await signInToOrganization(
    db,
    { uid: provider.uid, organization: org, name: idp.name, issuer: idp.oidc.issuer, clientId: "c", clientSecret: "s", additionalScopes: [], groupsClaim: "", defaultRoleUid: "" },
    { issuer: idp.oidc.issuer, subject: "grace", name: "grace" },
    [],
    now,
  );
  await bindRole(db, folder, orgPerson, role("owner"), now);

  const fillers: string[] = [];
  for (let i = 0; i < 6; i++) {
    fillers.push(await identity(org, `filler ${i}`));
    await bindRole(db, org, fillers[i], role("viewer"), now);
  }
  const belowOnly = await identity(folder, "below only");
  await bindRole(db, subfolder, belowOnly, role("viewer"), now);
  const unbound = await identity(org, "unbound");

  const caller = async (name: string, at: string, roleName: Parameters<typeof builtInRole>[0]) => {
    const uid = await identity(org, name);
    await bindRole(db, at, uid, role(roleName), now);
    return { uid, token: (await server.server.tokens.issue({ subject: uid, audience: server.apiUrl })).token };
  };
  const subfolderViewer = await caller("project viewer", subfolder, "viewer");
  const puller = await caller("org puller", org, "registry.pull");
  return { org, folder, subfolder, owner: server.ownerUid, workload, keys, pullToken, person, orgPerson, fillers, belowOnly, unbound, subfolderViewer, puller };
}

for (const database of await testDatabases()) {
  describe(`members of a group on ${database.name}`, { skip: database.skip }, () => {
    let tree: Tree;
    const served = serveOverWires({ database, logLevel: "silent", apiUrl: "listen", prepare: async (server) => void (tree = await plant(server)) });

    /** ListMembers of `parent` on `wire`: `query` in the request and, for REST, in the URL's query. */
    const call = (wire: Wire, parent: string, query: Record<string, string | number> = {}, token = served.server().ownerToken): Promise<Outcome> => {
      const search = queryString(query);
      return wire.call(listMembers, requestOf(parent, query), { method: "GET", path: `/iam/v2/groups/${parent}/members${search === "" ? "" : `?${search}`}` }, token);
    };
    const membersOf = (out: Outcome) => (out.body?.members ?? []) as unknown as MemberJson[];

    /** Every member of `parent`, walking pages of `pageSize` on `wire`; each page's total is checked. */
    async function walk(wire: Wire, parent: string, query: Record<string, string | number>, pageSize: number): Promise<{ members: MemberJson[]; pages: number; total: number }> {
      const members: MemberJson[] = [];
      let pageToken = "";
      let pages = 0;
      let total = -1;
      do {
        const out = await call(wire, parent, { ...query, pageSize, ...(pageToken === "" ? {} : { pageToken }) });
        assert.equal(out.code, 0, `${wire.name}: ${out.message}`);
        const page = membersOf(out);
        assert.ok(page.length <= pageSize, wire.name);
        const pageTotal = Number(out.body?.totalCount);
        if (total === -1) total = pageTotal;
        assert.equal(pageTotal, total, `${wire.name}: every page carries the same total`);
        members.push(...page);
        pageToken = (out.body?.nextPageToken as string | undefined) ?? "";
        pages++;
      } while (pageToken !== "");
      return { members, pages, total };
    }

    /** The members at the folder: bound on it or on the organization. */
    const atFolder = () => [tree.owner, tree.workload, tree.keys, tree.pullToken, tree.person, tree.orgPerson, ...tree.fillers, tree.puller.uid];

    test("at a folder below the organization: its direct and inherited members with their bindings, the same on every wire", async () => {
      const out = await served.onEveryWire((wire) => call(wire, tree.folder, { pageSize: 200 }));
      assert.equal(out.code, 0, out.message);
      const members = membersOf(out);
      assert.deepEqual(members.map((m) => m.uid), [...atFolder()].sort(), "ordered by uid; neither the one bound only below nor the unbound");
      assert.equal(Number(out.body?.totalCount), atFolder().length);
      assert.equal(out.body?.nextPageToken ?? "", "");
      const byUid = new Map(members.map((m) => [m.uid, m]));
      const kinds = Object.fromEntries(
        (["owner", "workload", "keys", "pullToken", "person", "orgPerson"] as const).map((k) => [k, byUid.get(tree[k])?.kind ?? "KIND_UNSPECIFIED"]),
      );
      assert.deepEqual(kinds, {
        owner: "KIND_OPERATOR_ISSUED",
        workload: "KIND_WORKLOAD",
        keys: "KIND_STATIC_KEYS",
        pullToken: "KIND_PULL_TOKEN",
        person: "KIND_PERSON",
        orgPerson: "KIND_PERSON",
      });
      const person = byUid.get(tree.person)!;
      assert.deepEqual([person.name, person.issuer, person.subject], ["ada", "https://login.example", "ada"]);
      const bindings = (m: MemberJson) => (m.roleBindings ?? []).map((b) => [b.group.uid, b.role.name, b.inherited ?? false]);
      assert.deepEqual(bindings(person), [
        [tree.org, "editor", true],
        [tree.folder, "viewer", false],
      ], "the organization's binding first, inherited; the folder's direct");
      assert.deepEqual(bindings(byUid.get(tree.owner)!), [[tree.org, "owner", true]]);
      assert.deepEqual(bindings(byUid.get(tree.keys)!), [[tree.folder, "editor", false]]);
      assert.deepEqual(bindings(byUid.get(tree.orgPerson)!), [[tree.folder, "owner", false]]);
      assert.equal(person.roleBindings?.[1].group.name, "team");
    });

    test("at the organization: only its own bindings, none inherited", async () => {
      const out = await served.onEveryWire((wire) => call(wire, tree.org, { pageSize: 200 }));
      assert.equal(out.code, 0, out.message);
      const members = membersOf(out);
      const expected = [tree.owner, tree.workload, tree.person, ...tree.fillers, tree.puller.uid];
      assert.deepEqual(members.map((m) => m.uid), expected.sort());
      assert.ok(members.every((m) => (m.roleBindings ?? []).every((b) => !b.inherited && b.group.uid === tree.org)));
    });

    test("pages across the members by name on every wire: each member once, in order, the total on every page", async () => {
      const expected = membersOf(await call(served.wire("connect"), tree.folder, { pageSize: 200, orderBy: "name desc" }));
      assert.equal(expected.length, atFolder().length);
      const names = expected.map((m) => m.name);
      assert.deepEqual(names, [...names].sort().reverse());
      for (const wire of served.wires()) {
        const { members, pages, total } = await walk(wire, tree.folder, { orderBy: "name desc" }, 5);
        assert.deepEqual(members, expected, wire.name);
        assert.equal(pages, 3, wire.name);
        assert.equal(total, atFolder().length, wire.name);
      }
      const first = await call(served.wire("rest"), tree.folder, { pageSize: 5 });
      const reused = await served.onEveryWire((wire) => call(wire, tree.subfolder, { pageSize: 5, pageToken: first.body?.nextPageToken as string }));
      assert.equal(reused.code, 3, "a page token of another group's listing is refused");
    });

    test("a caller with the capability only below, at its own group: the members there with what they inherit", async () => {
      const { token } = tree.subfolderViewer;
      const out = await served.onEveryWire((wire) => call(wire, tree.subfolder, { pageSize: 200 }, token));
      assert.equal(out.code, 0, out.message);
      const members = membersOf(out);
      assert.deepEqual(members.map((m) => m.uid), [...atFolder(), tree.belowOnly, tree.subfolderViewer.uid].sort());
      const keys = members.find((m) => m.uid === tree.keys)!;
      assert.deepEqual((keys.roleBindings ?? []).map((b) => [b.group.uid, b.inherited ?? false]), [[tree.folder, true]]);
      const below = members.find((m) => m.uid === tree.belowOnly)!;
      assert.deepEqual((below.roleBindings ?? []).map((b) => [b.group.uid, b.inherited ?? false]), [[tree.subfolder, false]]);
    });

    test("refused: the capability only below the group, or not at all", async () => {
      for (const [caller, parent] of [
        [tree.subfolderViewer, tree.folder],
        [tree.puller, tree.folder],
        [tree.puller, tree.org],
      ] as const) {
        const out = await served.onEveryWire((wire) => call(wire, parent, {}, caller.token));
        assert.equal(out.code, 7, out.message);
      }
      const anonymous = await served.onEveryWire((wire) => call(wire, tree.folder, {}, ""));
      assert.equal(anonymous.code, 16);
    });

    test("a group that does not exist is NOT_FOUND; a negative page size, an unknown sort key INVALID_ARGUMENT", async () => {
      assert.equal((await served.onEveryWire((wire) => call(wire, newChildUid(tree.folder)))).code, 5);
      assert.equal((await served.onEveryWire((wire) => call(wire, tree.folder, { pageSize: -1 }))).code, 3);
      assert.equal((await served.onEveryWire((wire) => call(wire, tree.folder, { orderBy: "role" }))).code, 3);
    });

    test("uidp narrows by identity: in_root leaves out the people of the server's login and identities of folders", async () => {
      const out = await served.onEveryWire((wire) => call(wire, tree.folder, { pageSize: 200, "uidp.inRoot": "true" }));
      assert.equal(out.code, 0, out.message);
      const expected = atFolder().filter((uid) => uid !== tree.person && uid !== tree.pullToken);
      assert.deepEqual(membersOf(out).map((m) => m.uid), expected.sort());
      assert.equal(Number(out.body?.totalCount), expected.length);
    });
  });
}
