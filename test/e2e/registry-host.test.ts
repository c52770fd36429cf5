import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { decodeJwt } from "jose";
import { builtInRole } from "../../src/access/capabilities.js";
import { newChildUid } from "../../src/aip/uidp.js";
import { bootstrapOrganization } from "../../src/server/bootstrap.js";
import { insertGroup } from "../../src/domains/iam/store/groups.js";
import { insertIdentity } from "../../src/domains/iam/store/identities.js";
import { bindRole } from "../../src/domains/iam/store/role-bindings.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

const REGISTRY = "http://registry.test";
const T0 = Date.UTC(2026, 0, 1, 0, 0, 0);
const MINUTE = 60_000;

let server: TestServer;
let publicOrgUid: string;
let teamUid: string;
/** An identity with registry.pull on the team group (where the private repos are). */
let pullerUid: string;
/** An identity with no binding. */
let strangerUid: string;

interface Answer {
  status: number;
  headers: Headers;
  body: {
    token?: string;
    access_token?: string;
    expires_in?: number;
    history?: Array<{ updateTimestamp: string; digest: string }>;
    errors?: Array<{ code: string; message: string; detail: unknown }>;
  };
}

const digestOf = (n: number) => `sha256:${n.toString(16).padStart(64, "0")}`;

async function insertRepo(groupUid: string, orgUid: string, name: string): Promise<string> {
  const uid = newChildUid(groupUid);
  const now = Date.now();
  await server.store.db
    .insertInto("repos")
    .values({ uid, group_uid: groupUid, org_uid: orgUid, name, description: "", readme: "", create_time: now, update_time: now })
    .execute();
  return uid;
}

/** Gives `tag` of `repoUid` one history record per time (minutes after T0), digests numbered from `first`. */
async function insertHistory(repoUid: string, tag: string, minutes: number[], first = 1): Promise<void> {
  const rows = minutes.map((m, i) => ({ repo_uid: repoUid, tag_name: tag, seq: i + 1, digest: digestOf(first + i), update_time: T0 + m * MINUTE }));
  for (let i = 0; i < rows.length; i += 200) await server.store.db.insertInto("tag_history").values(rows.slice(i, i + 200)).execute();
  const last = rows[rows.length - 1];
  await server.store.db
    .insertInto("tags")
    .values({ uid: newChildUid(repoUid), repo_uid: repoUid, name: tag, digest: last.digest, deprecated: 0, forms: 0, create_time: T0, update_time: last.update_time })
    .execute();
}

async function insertIdentityIn(groupUid: string, name: string): Promise<string> {
  const uid = newChildUid(groupUid);
  const now = Date.now();
  await insertIdentity(server.store.db, {
    uid,
    group_uid: groupUid,
    name,
    description: "",
    claim_match: "",
    static_keys: "",
    last_seen_time: null,
    create_time: now,
    update_time: now,
  });
  return uid;
}

async function get(path: string, authorization?: string): Promise<Answer> {
  const res = await fetch(`${server.registryUrl}${path}`, { headers: authorization === undefined ? {} : { authorization } });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text === "" ? {} : (JSON.parse(text) as Answer["body"]) };
}

async function platformToken(subject: string, audience = REGISTRY): Promise<string> {
  return (await server.server.tokens.issue({ subject, audience })).token;
}

/** A registry token from /token for `name`, with the given Authorization. */
async function registryToken(name: string, authorization?: string): Promise<string> {
  const answer = await get(`/token?scope=${encodeURIComponent(`repository:${name}:pull`)}&service=registry.test`, authorization);
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  assert.ok(answer.body.token);
  assert.equal(answer.body.access_token, answer.body.token);
  return answer.body.token;
}

const history = (name: string, tag: string, token: string | undefined, query = "") =>
  get(`/v2/${name}/_service/history/${tag}${query}`, token === undefined ? undefined : `Bearer ${token}`);

function assertError(answer: Answer, status: number, code: string) {
  assert.equal(answer.status, status, JSON.stringify(answer.body));
  assert.equal(answer.body.errors?.[0]?.code, code, JSON.stringify(answer.body));
  assert.equal(answer.headers.get("docker-distribution-api-version"), "registry/2.0");
}

before(async () => {
  server = await startTestServer();
  const now = Date.now();
  publicOrgUid = (await bootstrapOrganization(server.store, "public", now)).organization.uid;
  teamUid = newChildUid(server.org.uid);
  await insertGroup(server.store.db, { uid: teamUid, parent_uid: server.org.uid, name: "team", description: "", create_time: now, update_time: now });

  const app = await insertRepo(publicOrgUid, publicOrgUid, "app");
  await insertHistory(app, "latest", [0, 10, 20]);
  await insertHistory(app, "latest-dev", [5]);
  await insertHistory(app, "v1", [1]);
  const nested = await insertRepo(publicOrgUid, publicOrgUid, "tools/builder");
  await insertHistory(nested, "latest", [3]);

  const secret = await insertRepo(teamUid, server.org.uid, "secret");
  await insertHistory(secret, "v1", [0, 1, 2, 3, 4]);
  const other = await insertRepo(teamUid, server.org.uid, "other");
  await insertHistory(other, "v1", [7]);
  const deep = await insertRepo(teamUid, server.org.uid, "a/b/c");
  await insertHistory(deep, "latest", [9]);
  const big = await insertRepo(teamUid, server.org.uid, "big");
  await insertHistory(big, "main", Array.from({ length: 1005 }, (_, i) => i));

  pullerUid = await insertIdentityIn(server.org.uid, "puller");
  await bindRole(server.store.db, teamUid, pullerUid, builtInRole("registry.pull").uid, now);
  strangerUid = await insertIdentityIn(server.org.uid, "stranger");
});
after(() => server.close());

describe("registry host", () => {
  test("GET /v2/: 401 with the challenge that sends clients to /token, 200 with a registry token", async () => {
    const answer = await get("/v2/");
    assertError(answer, 401, "UNAUTHORIZED");
    assert.equal(answer.headers.get("docker-distribution-api-version"), "registry/2.0");
    assert.equal(answer.headers.get("www-authenticate"), 'Bearer realm="http://registry.test/token",service="registry.test"');
    const ok = await get("/v2/", `Bearer ${await registryToken("public/app")}`);
    assert.equal(ok.status, 200);
    assert.equal(ok.headers.get("docker-distribution-api-version"), "registry/2.0");
    assertError(await get("/v2/", `Bearer ${await platformToken(pullerUid, "http://api.test")}`), 403, "DENIED");
  });

  test("anonymous token for a public image reads latest and latest-dev, not other tags", async () => {
    const token = await registryToken("public/app");
    const claims = decodeJwt(token);
    assert.equal(claims.aud, REGISTRY);
    assert.deepEqual(claims.access, [{ type: "repository", name: "public/app", actions: ["pull"], tags: ["latest", "latest-dev"] }]);
    assert.ok(claims.exp! - claims.iat! >= 300 && claims.exp! - claims.iat! <= 3600);

    const latest = await history("public/app", "latest", token);
    assert.equal(latest.status, 200, JSON.stringify(latest.body));
    assert.deepEqual(latest.body, {
      history: [
        { updateTimestamp: "2026-01-01T00:00:00.000Z", digest: digestOf(1) },
        { updateTimestamp: "2026-01-01T00:10:00.000Z", digest: digestOf(2) },
        { updateTimestamp: "2026-01-01T00:20:00.000Z", digest: digestOf(3) },
      ],
    });
    assert.equal((await history("public/app", "latest-dev", token)).body.history?.length, 1);
    assertError(await history("public/app", "v1", token), 403, "DENIED");
  });

  test("anonymous callers get no token for private or unknown images, and the answers do not tell them apart", async () => {
    const secret = await get("/token?scope=repository:acme/team-secret:pull");
    const real = await get("/token?scope=repository:acme/secret:pull");
    const noOrg = await get("/token?scope=repository:nowhere/secret:pull");
    for (const answer of [secret, real, noOrg]) {
      assertError(answer, 401, "UNAUTHORIZED");
      assert.match(answer.headers.get("www-authenticate") ?? "", /^Bearer realm="http:\/\/registry\.test\/token",service="registry\.test",scope="repository:/);
    }
    assert.equal(real.body.errors?.[0]?.message, secret.body.errors?.[0]?.message);
    // The public organization's contents are public: an unknown image there gets the free tier's token, and its calls NAME_UNKNOWN.
    const nope = await registryToken("public/nope");
    assertError(await history("public/nope", "latest", nope), 404, "NAME_UNKNOWN");
  });

  test("a platform token for the registry audience with registry.pull gets a token for every tag (Bearer and Basic _token)", async () => {
    const platform = await platformToken(pullerUid);
    for (const authorization of [`Bearer ${platform}`, `Basic ${Buffer.from(`_token:${platform}`).toString("base64")}`]) {
      const token = await registryToken("acme/secret", authorization);
      const claims = decodeJwt(token);
      assert.equal(claims.sub, pullerUid);
      assert.deepEqual(claims.access, [{ type: "repository", name: "acme/secret", actions: ["pull"] }]);
      const answer = await history("acme/secret", "v1", token);
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.deepEqual(
        answer.body.history?.map((h) => h.digest),
        [1, 2, 3, 4, 5].map(digestOf),
      );
    }
    // Basic with another user name is refused.
    assertError(await get("/token?scope=repository:acme/secret:pull", `Basic ${Buffer.from(`puller:${platform}`).toString("base64")}`), 401, "UNAUTHORIZED");
  });

  test("without CAP_REGISTRY_PULL the token endpoint answers 403 DENIED, existing or not; with it, a name not there yet is granted and its calls answer NAME_UNKNOWN", async () => {
    const stranger = `Bearer ${await platformToken(strangerUid)}`;
    assertError(await get("/token?scope=repository:acme/secret:pull", stranger), 403, "DENIED");
    assertError(await get("/token?scope=repository:acme/missing:pull", stranger), 403, "DENIED");
    // A caller holding pull on the whole organization is granted pull on a name not there yet, and learns from the call that it is missing.
    const missing = await registryToken("acme/missing", `Bearer ${await platformToken(server.ownerUid)}`);
    assert.deepEqual(decodeJwt(missing).access, [{ type: "repository", name: "acme/missing", actions: ["pull"] }]);
    assertError(await history("acme/missing", "v1", missing), 404, "NAME_UNKNOWN");
    // Without a binding, a public image still gets the free-tier token.
    const token = await registryToken("public/app", stranger);
    assert.deepEqual((decodeJwt(token).access as Array<{ tags?: string[] }>)[0].tags, ["latest", "latest-dev"]);
  });

  test("a token for the API audience is refused: 401 at /token, 403 at Tag History", async () => {
    const apiToken = await platformToken(pullerUid, "http://api.test");
    assertError(await get("/token?scope=repository:acme/secret:pull", `Bearer ${apiToken}`), 401, "UNAUTHORIZED");
    assertError(await history("acme/secret", "v1", apiToken), 403, "DENIED");
    // An API-audience token is 403 whoever it names.
    assertError(await history("acme/secret", "v1", await platformToken(server.ownerUid, "http://api.test")), 403, "DENIED");
    // A registry token cannot be exchanged for another.
    const registry = await registryToken("acme/secret", `Bearer ${await platformToken(pullerUid)}`);
    assertError(await get("/token?scope=repository:acme/other:pull", `Bearer ${registry}`), 401, "UNAUTHORIZED");
    // Garbage is 401.
    assertError(await history("acme/secret", "v1", "not-a-token"), 401, "UNAUTHORIZED");
  });

  test("a platform token for the registry audience reads Tag History directly, judged by the caller's role bindings", async () => {
    const puller = await platformToken(pullerUid);
    const answer = await history("acme/secret", "v1", puller);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.deepEqual(answer.body.history?.map((h) => h.digest), [1, 2, 3, 4, 5].map(digestOf));
    assert.equal((await history("acme/secret", "v1", await platformToken(server.ownerUid), "?start=2026-01-01T00:04:00Z")).body.history?.length, 1);
    // Without a binding: 403, existing or not; the organization's puller learns a repo is missing.
    const stranger = await platformToken(strangerUid);
    assertError(await history("acme/secret", "v1", stranger), 403, "DENIED");
    assertError(await history("acme/missing", "v1", stranger), 403, "DENIED");
    assertError(await history("acme/missing", "v1", await platformToken(server.ownerUid)), 404, "NAME_UNKNOWN");
    // A public image without a binding: the free tier's tags only, as /token grants.
    assert.equal((await history("public/app", "latest", stranger)).status, 200);
    assertError(await history("public/app", "v1", stranger), 403, "DENIED");
    // A binding removed is felt at once (no token of 5 minutes in between).
    const late = await insertIdentityIn(server.org.uid, "late");
    const binding = await bindRole(server.store.db, teamUid, late, builtInRole("registry.pull").uid, Date.now());
    const lateToken = await platformToken(late);
    assert.equal((await history("acme/secret", "v1", lateToken)).status, 200);
    await server.store.db.deleteFrom("role_bindings").where("uid", "=", binding.uid).execute();
    assertError(await history("acme/secret", "v1", lateToken), 403, "DENIED");
    // Another audience: 403; none: 401 with the challenge.
    assertError(await history("acme/secret", "v1", await platformToken(pullerUid, "http://api.test")), 403, "DENIED");
    const bare = await history("acme/secret", "v1", undefined);
    assertError(bare, 401, "UNAUTHORIZED");
    assert.match(bare.headers.get("www-authenticate") ?? "", /^Bearer realm="http:\/\/registry\.test\/token"/);
  });

  test("a registry token for image A does not read image B", async () => {
    const token = await registryToken("acme/secret", `Bearer ${await platformToken(pullerUid)}`);
    assertError(await history("acme/other", "v1", token), 403, "DENIED");
    const anonymous = await registryToken("public/app");
    assertError(await history("public/tools/builder", "latest", anonymous), 403, "DENIED");
  });

  test("no token: 401 with the exact challenge", async () => {
    const answer = await history("acme/secret", "v1", undefined);
    assertError(answer, 401, "UNAUTHORIZED");
    assert.equal(answer.headers.get("www-authenticate"), 'Bearer realm="http://registry.test/token",service="registry.test",scope="repository:acme/secret:pull"');
    const nested = await history("acme/a/b/c", "latest", undefined);
    assert.equal(nested.headers.get("www-authenticate"), 'Bearer realm="http://registry.test/token",service="registry.test",scope="repository:acme/a/b/c:pull"');
  });

  test("start and end are inclusive bounds", async () => {
    const token = await registryToken("acme/secret", `Bearer ${await platformToken(pullerUid)}`);
    const digests = async (query: string) => {
      const answer = await history("acme/secret", "v1", token, query);
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      return answer.body.history!.map((h) => h.digest);
    };
    // Records at minutes 0..4, digests 1..5.
    assert.deepEqual(await digests("?start=2026-01-01T00:01:00Z"), [2, 3, 4, 5].map(digestOf));
    assert.deepEqual(await digests("?end=2026-01-01T00:03:00.000Z"), [1, 2, 3, 4].map(digestOf));
    assert.deepEqual(await digests("?start=2026-01-01T00:01:00Z&end=2026-01-01T00:03:00Z"), [2, 3, 4].map(digestOf));
    assert.deepEqual(await digests("?start=2026-01-01T00:02:00Z&end=2026-01-01T00:02:00Z"), [digestOf(3)]);
    // Offsets (an unencoded + reads as a space) and sub-millisecond fractions.
    assert.deepEqual(await digests("?start=2026-01-01T01:02:00+01:00&end=2026-01-01T01:02:00%2B01:00"), [digestOf(3)]);
    assert.deepEqual(await digests("?start=2026-01-01T00:01:59.999999Z&end=2026-01-01T00:02:00.000001Z"), [digestOf(3)]);
    assert.deepEqual(await digests("?start=2026-01-01T00:02:00.000001Z"), [4, 5].map(digestOf));
    assert.deepEqual(await digests("?start=2027-01-01T00:00:00Z"), []);
    // ISO 8601 forms: a date (its midnight UTC), no seconds, no fraction, a fraction, offsets.
    assert.deepEqual(await digests("?end=2026-01-01"), [digestOf(1)]);
    assert.deepEqual(await digests("?start=2026-01-01&end=2026-01-01T00:02Z"), [1, 2, 3].map(digestOf));
    assert.deepEqual(await digests("?start=2026-01-02"), []);
    assert.deepEqual(await digests("?start=2026-01-01T00:03:00.5Z"), [digestOf(5)]);
    assert.deepEqual(await digests("?start=2026-01-01T02:03:00%2B02:00&end=2026-01-01T02:03:00%2B0200"), [digestOf(4)]);
    assert.deepEqual(await digests("?end=2025-12-31T19:01:00-05:00"), [1, 2].map(digestOf));
  });

  test("the hosted registry's path, `_chainguard/history`, answers as `_service/history`", async () => {
    const token = await registryToken("acme/secret", `Bearer ${await platformToken(pullerUid)}`);
    const spec = await history("acme/secret", "v1", token, "?start=2026-01-01T00:01:00Z");
    const hosted = await get(`/v2/acme/secret/_chainguard/history/v1?start=2026-01-01T00:01:00Z`, `Bearer ${token}`);
    assert.equal(hosted.status, 200, JSON.stringify(hosted.body));
    assert.deepEqual(hosted.body, spec.body);
    assert.deepEqual(hosted.body.history!.map((h) => h.digest), [2, 3, 4, 5].map(digestOf));
    assertError(await get("/v2/acme/secret/_chainguard/history/v1"), 401, "UNAUTHORIZED");
    const other = await registryToken("acme/big", `Bearer ${await platformToken(pullerUid)}`);
    assertError(await get("/v2/acme/secret/_chainguard/history/v1", `Bearer ${other}`), 403, "DENIED");
  });

  test("at most 1000 records, oldest first; narrowing with start reaches the newest", async () => {
    const token = await registryToken("acme/big", `Bearer ${await platformToken(pullerUid)}`);
    const first = await history("acme/big", "main", token);
    assert.equal(first.status, 200);
    assert.equal(first.body.history?.length, 1000);
    assert.equal(first.body.history?.[0].digest, digestOf(1));
    assert.equal(first.body.history?.[999].digest, digestOf(1000));
    const lastTime = first.body.history![999].updateTimestamp;
    const rest = await history("acme/big", "main", token, `?start=${lastTime}`);
    assert.deepEqual(
      rest.body.history?.map((h) => h.digest),
      [1000, 1001, 1002, 1003, 1004, 1005].map(digestOf),
    );
  });

  test("bad timestamps, start after end, bad tags and unknown repos", async () => {
    const token = await registryToken("acme/secret", `Bearer ${await platformToken(pullerUid)}`);
    for (const query of ["?start=yesterday", "?end=2026-01-01T00:00:00", "?start=2026-02-30", "?end=2026-01-01T24:00:00Z", "?start=2026-01-01T00:00:00Z&start=2026-01-02T00:00:00Z"]) {
      const answer = await history("acme/secret", "v1", token, query);
      assertError(answer, 400, "INVALID_ARGUMENT");
      const bound = query.slice(1, query.indexOf("="));
      assert.match(answer.body.errors![0].message, new RegExp(`^${bound} `), "the message names the parameter");
      assert.deepEqual(Object.keys(answer.body.errors![0].detail as object), [bound]);
    }
    assertError(await history("acme/secret", "v1", token, "?start=2026-01-02T00:00:00Z&end=2026-01-01T00:00:00Z"), 400, "INVALID_ARGUMENT");
    assertError(await history("acme/secret", "x".repeat(129), token), 400, "TAG_INVALID");
    assert.equal((await history("acme/secret", "x".repeat(128), token)).status, 200);
    assertError(await history("acme/secret", "-bad", token), 400, "TAG_INVALID");

    // A valid token for a name that has no repo: 404 only then.
    const { token: forMissing } = await server.server.tokens.issue({
      subject: pullerUid,
      audience: REGISTRY,
      claims: { access: [{ type: "repository", name: "acme/gone", actions: ["pull"] }] },
    });
    assertError(await history("acme/gone", "v1", forMissing), 404, "NAME_UNKNOWN");
    assertError(await history("acme/gone", "v1", token), 403, "DENIED");
  });

  test("image names with /", async () => {
    const token = await registryToken("acme/a/b/c", `Bearer ${await platformToken(pullerUid)}`);
    assert.deepEqual((decodeJwt(token).access as Array<{ name: string }>)[0].name, "acme/a/b/c");
    const answer = await history("acme/a/b/c", "latest", token);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.deepEqual(answer.body.history?.map((h) => h.digest), [digestOf(1)]);
    const anonymous = await registryToken("public/tools/builder");
    assert.equal((await history("public/tools/builder", "latest", anonymous)).status, 200);
  });

  test("malformed scopes are 400 in the registry error format", async () => {
    // No scope (a client's login check): a token that grants nothing.
    const bare = await get("/token");
    assert.equal(bare.status, 200);
    assert.deepEqual(decodeJwt(bare.body.token!).access, []);
    // The catalog is `registry:catalog:*` (registry-catalog.test.ts); other registry resources are not.
    assertError(await get("/token?scope=registry:catalog:pull"), 400, "UNSUPPORTED");
    assertError(await get("/token?scope=registry:metadata:*"), 400, "UNSUPPORTED");
    assertError(await get("/token?scope=repository:public/app:fly"), 400, "UNSUPPORTED");
    assertError(await get(`/token?${Array.from({ length: 9 }, () => "scope=repository:public/app:pull").join("&")}`), 400, "UNSUPPORTED");
    // Pushing needs credentials.
    assertError(await get("/token?scope=repository:public/app:push"), 401, "UNAUTHORIZED");
    assertError(await get("/token?scope=repository:public/app"), 400, "UNSUPPORTED");
    assertError(await get("/token?scope=repository:public:pull"), 400, "NAME_INVALID");
    assertError(await get("/token?scope=repository:Public/app:pull"), 400, "NAME_INVALID");
    assertError(await get("/token?scope=repository:public//app:pull"), 400, "NAME_INVALID");
    assertError(await get(`/token?scope=repository:public/${"a".repeat(300)}:pull`), 400, "NAME_INVALID");
    // A scope asked twice is granted once.
    const twice = await get("/token?scope=repository:public/app:pull&scope=repository:public/app:pull");
    assert.deepEqual(decodeJwt(twice.body.token!).access, [{ type: "repository", name: "public/app", actions: ["pull"], tags: ["latest", "latest-dev"] }]);
    assertError(await get("/v2/public/a..b/_service/history/latest"), 400, "NAME_INVALID");
    // pull among other actions grants pull only.
    const token = await registryToken("public/app");
    assert.ok(token);
    const withPush = await get("/token?scope=repository:public/app:pull,push");
    assert.equal(withPush.status, 200);
    assert.deepEqual((decodeJwt(withPush.body.token!).access as Array<{ actions: string[] }>)[0].actions, ["pull"]);
  });
});
