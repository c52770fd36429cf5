import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, test } from "node:test";
import { bootstrapOrganization } from "../../src/server/bootstrap.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

/**
 * The README's registry walkthrough over plain HTTP: a repo, a tag moved between two
 * digests, the tag's history read with a private token and narrowed with `start`, the
 * pinned reference, and a public image's `latest` read anonymously.
 */

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.close());

const sha = (text: string) => `sha256:${createHash("sha256").update(text).digest("hex")}`;

async function json(url: string, init: RequestInit = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url, init);
  const text = await res.text();
  return { status: res.status, body: text === "" ? {} : (JSON.parse(text) as Record<string, unknown>) };
}

test("create a repo, move a tag, read and narrow its history, pin the newest digest", async () => {
  const api = server.apiUrl;
  const auth = { authorization: `Bearer ${server.ownerToken}`, "content-type": "application/json" };
  const [d1, d2] = [sha("one"), sha("two")];
  assert.equal(d1, "sha256:7692c3ad3540bb803c020b3aee66cd8887123234ea0c6e7143c0add73ff431ed", "the README's printf one | sha256sum");

  const repo = await json(`${api}/registry/v2/repos/${server.org.uid}`, { method: "POST", headers: auth, body: JSON.stringify({ name: "tools/app" }) });
  assert.equal(repo.status, 200);
  const repoUid = repo.body.uid as string;
  for (const digest of [d1, d2]) {
    const tag = await json(`${api}/registry/v2/tags/${repoUid}`, { method: "POST", headers: auth, body: JSON.stringify({ name: "latest", digest }) });
    assert.equal(tag.status, 200);
    assert.equal(tag.body.digest, digest);
  }
  const listed = await json(`${api}/registry/v2/tags?uidp.children_of=${repoUid}`, { headers: auth });
  assert.deepEqual((listed.body.tags as Array<{ name: string; digest: string }>).map((t) => [t.name, t.digest]), [["latest", d2]]);
  assert.equal(listed.body.totalCount, "1");

  // `platform-api token --audience <registry URL>`, then /token, then the history.
  const platform = await server.server.tokens.issue({ subject: server.ownerUid, audience: "http://registry.test" });
  const reg = await json(`${server.registryUrl}/token?scope=repository:acme/tools/app:pull`, { headers: { authorization: `Bearer ${platform.token}` } });
  assert.equal(reg.status, 200);
  const bearer = { authorization: `Bearer ${reg.body.token as string}` };
  const historyUrl = `${server.registryUrl}/v2/acme/tools/app/_service/history/latest`;
  const history = await json(historyUrl, { headers: bearer });
  assert.equal(history.status, 200);
  const records = history.body.history as Array<{ updateTimestamp: string; digest: string }>;
  assert.deepEqual(records.map((r) => r.digest), [d1, d2], "oldest first");
  const start = records.at(-1)!.updateTimestamp;
  const narrowed = await json(`${historyUrl}?start=${start}`, { headers: bearer });
  assert.deepEqual((narrowed.body.history as Array<{ digest: string }>).map((r) => r.digest), [d2], "start is inclusive and leaves out older records");
  const pinned = `localhost:5000/acme/tools/app@${records.at(-1)!.digest}`;
  assert.equal(pinned, `localhost:5000/acme/tools/app@${d2}`);
  assert.equal((await json(historyUrl)).status, 401, "a private image needs the token");
  assert.equal((await json(`${server.registryUrl}/token?scope=repository:acme/tools/app:pull`)).status, 401);
});

test("a public image's latest needs no credential", async () => {
  const { organization, identity } = await bootstrapOrganization(server.store, "public", Date.now());
  const { token } = await server.server.tokens.issue({ subject: identity.uid, audience: "http://api.test" });
  const auth = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  const repo = await json(`${server.apiUrl}/registry/v2/repos/${organization.uid}`, { method: "POST", headers: auth, body: JSON.stringify({ name: "base" }) });
  await json(`${server.apiUrl}/registry/v2/tags/${repo.body.uid as string}`, { method: "POST", headers: auth, body: JSON.stringify({ name: "latest", digest: sha("base") }) });
  const reg = await json(`${server.registryUrl}/token?scope=repository:public/base:pull`);
  assert.equal(reg.status, 200);
  const history = await json(`${server.registryUrl}/v2/public/base/_service/history/latest`, { headers: { authorization: `Bearer ${reg.body.token as string}` } });
  assert.deepEqual((history.body.history as Array<{ digest: string }>).map((r) => r.digest), [sha("base")]);
});
