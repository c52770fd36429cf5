import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { builtInRole } from "../../src/access/capabilities.js";
import { newChildUid } from "../../src/aip/uidp.js";
import { bootstrapOrganization } from "../../src/server/bootstrap.js";
import { insertGroup } from "../../src/domains/iam/store/groups.js";
import { insertIdentity } from "../../src/domains/iam/store/identities.js";
import { bindRole } from "../../src/domains/iam/store/role-bindings.js";
import { insertRepo } from "../../src/domains/registry/store/repos.js";
import { dropFresh, testDatabases } from "../support/databases.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

/**
 * `GET /v2/_catalog` over plain HTTP, as registry clients call it (crane catalog, regctl repo ls:
 * neither installs here, as both are downloaded binaries): a token for `registry:catalog:*`,
 * the repos the caller may pull in byte order, `n`/`last` pages chained by `Link` headers.
 */

interface Answer {
  status: number;
  headers: Headers;
  body: string;
}

for (const database of await testDatabases()) {
  describe(`the catalog on ${database.name}`, { skip: database.skip }, () => {
    let url: string;
    let server: TestServer;
    /** Identities: `puller` with registry.pull on acme's folder `team` only; `both` with it on acme and on acme-x. */
    let pullerUid: string;
    let bothUid: string;

    const call = async (path: string, token?: string, method = "GET"): Promise<Answer> => {
      const res = await fetch(`${server.registryUrl}${path}`, { method, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } });
      return { status: res.status, headers: res.headers, body: await res.text() };
    };
    const repositories = (answer: Answer) => (JSON.parse(answer.body) as { repositories: string[] }).repositories;
    /** A platform token of `subject` for the registry audience. */
    const platform = async (subject: string) => (await server.server.tokens.issue({ subject, audience: "http://registry.test" })).token;
    /** A registry token from `/token` for `scopes`, as `subject` or anonymously. */
    const registryToken = async (scopes: string[], subject?: string) => {
      const res = await fetch(`${server.registryUrl}/token?${scopes.map((s) => `scope=${encodeURIComponent(s)}`).join("&")}`, {
        headers: subject === undefined ? {} : { authorization: `Bearer ${await platform(subject)}` },
      });
      assert.equal(res.status, 200);
      return ((await res.json()) as { token: string }).token;
    };

    before(async () => {
      url = await database.fresh();
      server = await startTestServer({ dbUrl: url });
      const db = server.store.db;
      const now = Date.now();
      const acme = server.org.uid;
      const team = newChildUid(acme);
      await insertGroup(db, { uid: team, parent_uid: acme, name: "team", description: "", create_time: now, update_time: now });
      const { organization: acmeX } = await bootstrapOrganization(server.store, "acme-x", now);
      const { organization: beta } = await bootstrapOrganization(server.store, "beta", now);
      const { organization: pub } = await bootstrapOrganization(server.store, "public", now);
      const repo = (group: string, name: string) => insertRepo(db, { uid: newChildUid(group), group_uid: group, name, description: "", readme: "", create_time: now, update_time: now });
      for (const name of ["zeta", "app", "tools/b"]) await repo(acme, name);
      for (const name of ["team/one", "team/two", "a-team"]) await repo(team, name);
      await repo(acmeX.uid, "x");
      await repo(beta.uid, "hidden");
      await repo(pub.uid, "base");
      const identity = async (holder: string, bindings: string[]) => {
        const uid = newChildUid(holder);
        await insertIdentity(db, { uid, group_uid: holder, name: "someone", description: "", claim_match: "", static_keys: "", last_seen_time: null, create_time: now, update_time: now });
        for (const group of bindings) await bindRole(db, group, uid, builtInRole("registry.pull").uid, now);
        return uid;
      };
      pullerUid = await identity(acme, [team]);
      bothUid = await identity(acme, [acme, acmeX.uid]);
    });
    after(async () => {
      await server.close();
      await dropFresh(url);
    });

    test("without a token: 401 with the challenge clients answer with a catalog token", async () => {
      const answer = await call("/v2/_catalog");
      assert.equal(answer.status, 401);
      assert.equal(answer.headers.get("www-authenticate"), 'Bearer realm="http://registry.test/token",service="registry.test",scope="registry:catalog:*"');
      assert.equal((JSON.parse(answer.body) as { errors: Array<{ code: string }> }).errors[0].code, "UNAUTHORIZED");
    });

    test("anonymously (a token from /token without credentials): the public organization's repos only", async () => {
      const token = await registryToken(["registry:catalog:*"]);
      const answer = await call("/v2/_catalog", token);
      assert.equal(answer.status, 200);
      assert.equal(answer.headers.get("content-type"), "application/json");
      assert.equal(answer.headers.get("docker-distribution-api-version"), "registry/2.0");
      assert.deepEqual(repositories(answer), ["public/base"]);
    });

    test("each caller sees the repos it may pull, in byte order: the owner all of its organization's, a folder's puller that folder's", async () => {
      const owner = await call("/v2/_catalog", await platform(server.ownerUid));
      assert.deepEqual(repositories(owner), ["acme/app", "acme/team/one", "acme/team/two", "acme/a-team", "acme/tools/b", "acme/zeta", "public/base"].sort(byteOrder));
      assert.deepEqual(repositories(owner), ["acme/a-team", "acme/app", "acme/team/one", "acme/team/two", "acme/tools/b", "acme/zeta", "public/base"]);
      const puller = await call("/v2/_catalog", await registryToken(["registry:catalog:*"], pullerUid));
      assert.deepEqual(repositories(puller), ["acme/a-team", "acme/team/one", "acme/team/two", "public/base"]);
      // `acme-x/` sorts before `acme/` byte by byte ('-' < '/'), whatever the organizations' own order.
      const both = await call("/v2/_catalog", await platform(bothUid));
      assert.deepEqual(repositories(both), ["acme-x/x", "acme/a-team", "acme/app", "acme/team/one", "acme/team/two", "acme/tools/b", "acme/zeta", "public/base"]);
    });

    test("pages of n chained by Link headers cover the list once; n=0 is empty; the last page has no Link", async () => {
      const token = await platform(bothUid);
      const seen: string[] = [];
      let next: string | undefined = "/v2/_catalog?n=3";
      let pages = 0;
      while (next !== undefined) {
        const answer = await call(next, token);
        assert.equal(answer.status, 200);
        const page = repositories(answer);
        assert.ok(page.length <= 3 && page.length > 0);
        seen.push(...page);
        pages++;
        const link = answer.headers.get("link");
        next = link === null ? undefined : /^<([^>]+)>; rel="next"$/.exec(link)![1];
      }
      assert.equal(pages, 3);
      assert.deepEqual(seen, repositories(await call("/v2/_catalog", token)));
      assert.equal((await call("/v2/_catalog?n=3&last=acme%2Fzeta", token)).headers.get("link"), null);
      assert.deepEqual(repositories(await call("/v2/_catalog?n=2&last=acme%2Fapp", token)), ["acme/team/one", "acme/team/two"]);
      const empty = await call("/v2/_catalog?n=0", token);
      assert.deepEqual([repositories(empty), empty.headers.get("link")], [[], null]);
      assert.deepEqual(repositories(await call("/v2/_catalog?last=public%2Fbase", token)), []);
      const head = await call("/v2/_catalog", token, "HEAD");
      assert.deepEqual([head.status, head.body], [200, ""]);
    });

    test("refused: bad n, a registry token without the catalog scope, a token of another audience, other methods", async () => {
      const token = await platform(server.ownerUid);
      for (const n of ["-1", "abc", "1.5", "9999999999"]) {
        const answer = await call(`/v2/_catalog?n=${n}`, token);
        assert.equal(answer.status, 400, n);
        assert.equal((JSON.parse(answer.body) as { errors: Array<{ code: string }> }).errors[0].code, "INVALID_ARGUMENT");
      }
      const repoOnly = await registryToken(["repository:acme/app:pull"], server.ownerUid);
      const denied = await call("/v2/_catalog", repoOnly);
      assert.equal(denied.status, 403);
      assert.match(denied.body, /DENIED.*registry:catalog:\*/);
      assert.equal((await call("/v2/_catalog", server.ownerToken)).status, 403, "an API-audience token");
      assert.equal((await call("/v2/_catalog", token, "DELETE")).status, 405);
    });

    test("a token request with the catalog scope and a repository the caller may not pull grants the catalog alone", async () => {
      const token = await registryToken(["registry:catalog:*", "repository:beta/hidden:pull"], pullerUid);
      const claims = JSON.parse(Buffer.from(token.split(".")[1], "base64url").toString()) as { access: unknown[] };
      assert.deepEqual(claims.access, [{ type: "registry", name: "catalog", actions: ["*"] }]);
      assert.deepEqual(repositories(await call("/v2/_catalog", token)), ["acme/a-team", "acme/team/one", "acme/team/two", "public/base"]);
      assert.equal((await call("/v2/beta/hidden/tags/list", token)).status, 403);
    });
  });
}

function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}
