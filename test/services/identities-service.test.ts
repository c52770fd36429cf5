import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { BadRequestSchema, ResourceInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { newChildUid } from "../../src/aip/uidp.js";
import { builtInRole } from "../../src/access/capabilities.js";
import { startInProcess, type InProcessApi } from "../support/in-process.js";

const code = (e: unknown) => ConnectError.from(e).code;
const badFields = (e: unknown) => ConnectError.from(e).findDetails(BadRequestSchema).flatMap((d) => d.fieldViolations.map((v) => v.field));
const JWKS = JSON.stringify({ keys: [{ kty: "EC", crv: "P-256", x: "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", y: "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0" }] });

let api: InProcessApi;
let owner: { headers: Record<string, string> };

before(async () => {
  api = await startInProcess();
  owner = api.as(api.ownerToken);
});
after(() => api.close());

test("CreateIdentity stores the claim match in the shared JSON shape and sets last_seen_time", async () => {
  const made = await api.identities.createIdentity(
    {
      parent: api.org,
      identity: {
        name: "ci deployer",
        description: "GitHub Actions",
        relationship: {
          case: "claimMatch",
          value: { issuer: "https://token.actions.githubusercontent.com", subjectPattern: "repo:acme/.*:ref:refs/heads/main", claims: { repository_owner: "acme" } },
        },
      },
    },
    owner,
  );
  assert.match(made.uid, new RegExp(`^${api.org}/[0-9a-f]{16}$`));
  assert.ok(made.lastSeenTime, "lastSeenTime is set in the create response (spec 2)");
  assert.deepEqual(made.lastSeenTime, made.createTime);
  const row = await api.store.db.selectFrom("identities").selectAll().where("uid", "=", made.uid).executeTakeFirstOrThrow();
  assert.deepEqual(JSON.parse(row.claim_match), {
    issuer: "https://token.actions.githubusercontent.com",
    subjectPattern: "repo:acme/.*:ref:refs/heads/main",
    claims: { repository_owner: "acme" },
  });
  assert.equal(row.static_keys, "");
  const read = await api.identities.getIdentity({ uid: made.uid }, owner);
  assert.equal(read.relationship.case, "claimMatch");
  assert.equal(read.relationship.value?.issuer, "https://token.actions.githubusercontent.com");
});

test("static keys are stored with the JWKS as an object and the expiration in epoch ms", async () => {
  const made = await api.identities.createIdentity(
    {
      parent: api.org,
      identity: { name: "keyed", relationship: { case: "staticKeys", value: { issuer: "https://ci.example", subject: "build", issuerKeys: JWKS, expirationTime: timestampFromMs(4102444800000) } } },
    },
    owner,
  );
  const row = await api.store.db.selectFrom("identities").selectAll().where("uid", "=", made.uid).executeTakeFirstOrThrow();
  assert.deepEqual(JSON.parse(row.static_keys), { issuer: "https://ci.example", subject: "build", issuerKeys: JSON.parse(JWKS), expirationTime: 4102444800000 });
  assert.equal(row.claim_match, "");
  const read = await api.identities.getIdentity({ uid: made.uid }, owner);
  assert.equal(read.relationship.case, "staticKeys");
  assert.deepEqual(JSON.parse(read.relationship.case === "staticKeys" ? read.relationship.value.issuerKeys : "{}"), JSON.parse(JWKS));
});

test("an identity without a relationship is allowed", async () => {
  const made = await api.identities.createIdentity({ parent: api.org, identity: { name: "cli only" } }, owner);
  assert.equal(made.relationship.case, undefined);
});

test("validation names each failing field", async () => {
  const cases: Array<[Parameters<typeof api.identities.createIdentity>[0], string[]]> = [
    [{ parent: api.org }, ["identity.name"]],
    [{ parent: api.org, identity: {} }, ["identity.name"]],
    [{ parent: api.org, identity: { name: "Upper Case" } }, ["identity.name"]],
    [{ parent: api.org, identity: { name: "x".repeat(129), description: "d".repeat(1025) } }, ["identity.name", "identity.description"]],
    [{ parent: "nope", identity: { name: "ok" } }, ["parent"]],
    [
      { parent: api.org, identity: { name: "ok", relationship: { case: "claimMatch", value: { issuer: "https://a.example", issuerPattern: "b" } } } },
      ["identity.claim_match.issuer_pattern", "identity.claim_match.subject"],
    ],
    [
      { parent: api.org, identity: { name: "ok", relationship: { case: "claimMatch", value: { issuer: "https://a.example", subjectPattern: "(unclosed", audiencePattern: "[" } } } },
      ["identity.claim_match.subject_pattern", "identity.claim_match.audience_pattern"],
    ],
    [
      { parent: api.org, identity: { name: "ok", relationship: { case: "claimMatch", value: { issuer: "https://a.example", subject: "s", claimPatterns: { team: "*bad" } } } } },
      ['identity.claim_match.claim_patterns["team"]'],
    ],
    [
      { parent: api.org, identity: { name: "ok", relationship: { case: "staticKeys", value: { issuer: "", subject: "s", issuerKeys: "not json" } } } },
      ["identity.static_keys.issuer", "identity.static_keys.issuer_keys"],
    ],
    [
      { parent: api.org, identity: { name: "ok", relationship: { case: "staticKeys", value: { issuer: "https://i.example", subject: "s", issuerKeys: '{"keys": []}' } } } },
      ["identity.static_keys.issuer_keys"],
    ],
    [
      { parent: api.org, identity: { name: "ok", relationship: { case: "claimMatch", value: { issuer: "notaurl", subject: "s" } } } },
      ["identity.claim_match.issuer"],
    ],
    [
      { parent: api.org, identity: { name: "ok", relationship: { case: "staticKeys", value: { issuer: "http://i.example", subject: "s", issuerKeys: '{"keys": [{"kty": "EC"}]}' } } } },
      ["identity.static_keys.issuer"],
    ],
  ];
  for (const [request, fields] of cases) {
    await assert.rejects(api.identities.createIdentity(request, owner), (e) => {
      assert.equal(code(e), Code.InvalidArgument, JSON.stringify(fields));
      assert.deepEqual(badFields(e), fields);
      return true;
    });
  }
  await assert.rejects(api.identities.createIdentity({ parent: api.org }, owner), (e) => ConnectError.from(e).rawMessage.startsWith("Invalid argument: identity.name: "));
});

test("authorization: viewer vs owner vs no binding; PERMISSION_DENIED before existence; NOT_FOUND with ResourceInfo", async () => {
  const a = await api.groups.createGroup({ parent: api.org, group: { name: "id-a" } }, owner);
  const b = await api.groups.createGroup({ parent: api.org, group: { name: "id-b" } }, owner);
  const inA = await api.identities.createIdentity({ parent: a.uid, identity: { name: "in a" } }, owner);
  const inB = await api.identities.createIdentity({ parent: b.uid, identity: { name: "in b" } }, owner);
  const viewer = api.as(await api.identityWith(api.org, "viewer", a.uid));

  assert.equal((await api.identities.getIdentity({ uid: inA.uid }, viewer)).name, "in a");
  await assert.rejects(api.identities.getIdentity({ uid: inB.uid }, viewer), (e) => code(e) === Code.PermissionDenied);
  await assert.rejects(api.identities.getIdentity({ uid: newChildUid(b.uid) }, viewer), (e) => code(e) === Code.PermissionDenied);
  await assert.rejects(api.identities.getIdentity({ uid: newChildUid(a.uid) }, viewer), (e) => {
    assert.equal(code(e), Code.NotFound);
    const info = ConnectError.from(e).findDetails(ResourceInfoSchema)[0];
    assert.equal(info.resourceType, "identity");
    return true;
  });
  await assert.rejects(api.identities.createIdentity({ parent: a.uid, identity: { name: "no" } }, viewer), (e) => code(e) === Code.PermissionDenied);
  await assert.rejects(api.identities.updateIdentity({ identity: { uid: inA.uid, name: "no" } }, viewer), (e) => code(e) === Code.PermissionDenied);
  await assert.rejects(api.identities.deleteIdentity({ uid: inA.uid }, viewer), (e) => code(e) === Code.PermissionDenied);

  const listed = await api.identities.listIdentities({ pageSize: 1 }, viewer);
  assert.equal(listed.totalCount, 1n, "narrowed in the query");
  assert.equal(listed.identities[0].uid, inA.uid);

  const nobody = api.as(await api.tokenFor(inB.uid));
  await assert.rejects(api.identities.getIdentity({ uid: inB.uid }, nobody), (e) => code(e) === Code.PermissionDenied);
  const none = await api.identities.listIdentities({}, nobody);
  assert.equal(none.totalCount, 0n);

  const named = await api.identities.listIdentities({ name: "in b", uidp: { descendantsOf: api.org } }, owner);
  assert.deepEqual(named.identities.map((i) => i.uid), [inB.uid]);
  await assert.rejects(api.identities.listIdentities({ orderBy: "colour" }, owner), (e) => code(e) === Code.InvalidArgument);
});

test("UpdateIdentity: masks, switching the relationship, unknown paths", async () => {
  const made = await api.identities.createIdentity(
    { parent: api.org, identity: { name: "patched", description: "before", relationship: { case: "claimMatch", value: { issuer: "https://i", subject: "s" } } } },
    owner,
  );
  let out = await api.identities.updateIdentity({ identity: { uid: made.uid, description: "after" } }, owner);
  assert.equal(out.name, "patched");
  assert.equal(out.description, "after");
  assert.equal(out.relationship.case, "claimMatch", "an absent relationship is kept");

  out = await api.identities.updateIdentity(
    { identity: { uid: made.uid, relationship: { case: "staticKeys", value: { issuer: "https://i", subject: "s", issuerKeys: JWKS } } }, updateMask: { paths: ["static_keys"] } },
    owner,
  );
  assert.equal(out.relationship.case, "staticKeys");
  const row = await api.store.db.selectFrom("identities").selectAll().where("uid", "=", made.uid).executeTakeFirstOrThrow();
  assert.equal(row.claim_match, "", "setting one member clears the other");

  out = await api.identities.updateIdentity({ identity: { uid: made.uid }, updateMask: { paths: ["static_keys"] } }, owner);
  assert.equal(out.relationship.case, undefined, "a masked member absent from the patch is cleared");

  await assert.rejects(api.identities.updateIdentity({ identity: { uid: made.uid }, updateMask: { paths: ["colour"] } }, owner), (e) => {
    assert.deepEqual(badFields(e), ["update_mask"]);
    return true;
  });
  await assert.rejects(api.identities.updateIdentity({ identity: { uid: made.uid, name: "BAD" } }, owner), (e) => badFields(e).includes("identity.name"));
  await assert.rejects(api.identities.updateIdentity({ identity: { uid: newChildUid(api.org), name: "x" } }, owner), (e) => code(e) === Code.NotFound);
});

test("UpdateIdentity judges an issuer it changes; a stored issuer it keeps is not judged again", async () => {
  const uid = newChildUid(api.org);
  const now = Date.now();
  const claimMatch = JSON.stringify({ issuer: "http://written.under.another.setting", subject: "s" });
  await api.store.db
    .insertInto("identities")
    .values({ uid, group_uid: api.org, name: "old", description: "", claim_match: claimMatch, static_keys: "", pull_token_hash: "", pull_token_expire_time: null, last_seen_time: now, create_time: now, update_time: now })
    .execute();
  const out = await api.identities.updateIdentity({ identity: { uid, description: "renamed" } }, owner);
  assert.equal(out.description, "renamed");
  const patch = { uid, relationship: { case: "claimMatch" as const, value: { issuer: "http://another.example", subject: "s" } } };
  await assert.rejects(api.identities.updateIdentity({ identity: patch, updateMask: { paths: ["claim_match"] } }, owner), (e) => {
    assert.deepEqual(badFields(e), ["identity.claim_match.issuer"]);
    return true;
  });
});

test("DeleteIdentity deletes its role bindings in the same transaction", async () => {
  const made = await api.identities.createIdentity({ parent: api.org, identity: { name: "doomed" } }, owner);
  await api.roleBindings.createRoleBinding({ parent: api.org, roleBinding: { identityUid: made.uid, roleUid: builtInRole("viewer").uid } }, owner);
  await api.identities.deleteIdentity({ uid: made.uid }, owner);
  const left = await api.store.db.selectFrom("role_bindings").select("uid").where("identity_uid", "=", made.uid).execute();
  assert.equal(left.length, 0);
  await assert.rejects(api.identities.deleteIdentity({ uid: made.uid }, owner), (e) => code(e) === Code.NotFound);
});
