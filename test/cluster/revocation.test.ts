import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { builtInRole } from "../../src/access/capabilities.js";
import { GRANTS_MAX_AGE_MS } from "../../src/domains/iam/index.js";
import { newChildUid } from "../../src/aip/uidp.js";
import { insertIdentity } from "../../src/domains/iam/store/identities.js";
import { bindRole } from "../../src/domains/iam/store/role-bindings.js";
import { openStore, type Store } from "../../src/server/open-store.js";
import { bootstrapChild, CHILD_API_URL, runCli, startChildServer, type Bootstrapped, type ChildServer } from "../support/child-server.js";
import { dropFresh, testDatabases } from "../support/databases.js";

/**
 * Two `serve` processes on one PostgreSQL schema, each caching callers' grants: a revoked role
 * binding stops granting at once on the replica that revoked it, and within GRANTS_MAX_AGE_MS
 * (plus a query) on the other; a binding granted on one is seen by the other within the same bound.
 */
const postgres = (await testDatabases()).find((d) => d.name === "postgres");
const skip = postgres === undefined ? "TEST_DIALECTS excludes postgres" : postgres.skip;
/** The documented bound on the other replica, with room for a loaded machine's scheduling. */
const BOUND_MS = GRANTS_MAX_AGE_MS + 1000;
/** The registry URL both replicas serve (their tokens' audience), wherever each listens. */
const REGISTRY_URL = "http://registry.test";

describe("grants cached by two replicas on one PostgreSQL", { skip, timeout: 180_000 }, () => {
  let url = "";
  let dir = "";
  let replicas: ChildServer[] = [];
  let boot: Bootstrapped;
  let store: Store;

  before(async () => {
    url = await postgres!.fresh();
    dir = mkdtempSync(join(tmpdir(), "revocation-"));
    replicas = await Promise.all([0, 1].map(() => startChildServer({ db: url, registryDir: join(dir, "blobs"), args: ["--registry-url", REGISTRY_URL] })));
    boot = await bootstrapChild(url, "revocation");
    store = await openStore(url, { poolSize: 1 });
  });
  after(async () => {
    await Promise.all(
      replicas.map(async (r) => {
        r.child.kill("SIGTERM");
        await r.exit;
      }),
    );
    await store?.close();
    if (url) await dropFresh(url);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** A fresh identity in the organization, bound `role` (`viewer` by default) on it, and its token for `audience` (the API's by default). */
  async function viewer(name: string, role: "viewer" | "registry.pull" = "viewer", audience = CHILD_API_URL) {
    const uid = newChildUid(boot.org.uid);
    const now = Date.now();
    await insertIdentity(store.db, { uid, group_uid: boot.org.uid, name, description: "", claim_match: "", static_keys: "", last_seen_time: null, create_time: now, update_time: now });
    const binding = await bindRole(store.db, boot.org.uid, uid, builtInRole(role).uid, now);
    const token = (await runCli("token", "--identity", uid, "--db", url, "--api-url", CHILD_API_URL, "--audience", audience)).trim();
    return { uid, binding: binding.uid, token };
  }
  const getOrg = async (replica: ChildServer, token: string) =>
    (await fetch(`${replica.apiUrl}/iam/v2/groups/${boot.org.uid}`, { headers: { authorization: `Bearer ${token}` } })).status;
  /** Milliseconds until `replica` answers GetGroup with `status`, polling; fails after 10 s. */
  async function msUntil(replica: ChildServer, token: string, status: number, since: number): Promise<number> {
    for (;;) {
      if ((await getOrg(replica, token)) === status) return performance.now() - since;
      assert.ok(performance.now() - since < 10_000, `replica still does not answer ${status} after 10 s`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  test("a binding revoked on one replica stops granting there at once and on the other within the bound", async () => {
    const [a, b] = replicas;
    const caller = await viewer("revoked");
    // Both replicas have the caller's grants cached: many calls within their clock's age.
    for (let i = 0; i < 5; i++) for (const replica of replicas) assert.equal(await getOrg(replica, caller.token), 200);

    const revoke = await fetch(`${a.apiUrl}/iam/v2/roleBindings/${caller.binding}`, { method: "DELETE", headers: { authorization: `Bearer ${boot.ownerToken}` } });
    assert.equal(revoke.status, 200, await revoke.text());
    const revokedAt = performance.now();
    assert.equal(await getOrg(a, caller.token), 403, "the revoking replica refuses at once");
    const elapsed = await msUntil(b, caller.token, 403, revokedAt);
    assert.ok(elapsed <= BOUND_MS, `the other replica refused after ${Math.round(elapsed)} ms, bound ${BOUND_MS} ms`);
    for (const replica of replicas) assert.equal(await getOrg(replica, caller.token), 403, "and stays refused");
  });

  test("a binding revoked outside any replica (the store, as the CLI writes) stops granting on both within the bound", async () => {
    const caller = await viewer("outside");
    for (let i = 0; i < 5; i++) for (const replica of replicas) assert.equal(await getOrg(replica, caller.token), 200);
    await store.db.deleteFrom("role_bindings").where("uid", "=", caller.binding).execute();
    const revokedAt = performance.now();
    for (const replica of replicas) {
      const elapsed = await msUntil(replica, caller.token, 403, revokedAt);
      assert.ok(elapsed <= BOUND_MS, `refused after ${Math.round(elapsed)} ms, bound ${BOUND_MS} ms`);
    }
  });

  test("a deleted identity's token stops working on the other replica within the bound", async () => {
    const [a, b] = replicas;
    const caller = await viewer("deleted");
    for (let i = 0; i < 5; i++) for (const replica of replicas) assert.equal(await getOrg(replica, caller.token), 200);
    const removed = await fetch(`${a.apiUrl}/iam/v2/identities/${caller.uid}`, { method: "DELETE", headers: { authorization: `Bearer ${boot.ownerToken}` } });
    assert.equal(removed.status, 200, await removed.text());
    const removedAt = performance.now();
    assert.equal(await getOrg(a, caller.token), 401, "the deleting replica refuses at once");
    const elapsed = await msUntil(b, caller.token, 401, removedAt);
    assert.ok(elapsed <= BOUND_MS, `the other replica refused after ${Math.round(elapsed)} ms, bound ${BOUND_MS} ms`);
  });

  /** `<org>/app:v1`, an image of one config blob, pushed by the owner on the first replica. */
  async function pushImage(): Promise<void> {
    const token = (await runCli("token", "--identity", boot.ownerUid, "--db", url, "--api-url", CHILD_API_URL, "--audience", REGISTRY_URL)).trim();
    const headers = { authorization: `Bearer ${token}` };
    const config = Buffer.from('{"architecture":"amd64","os":"linux"}');
    const digest = `sha256:${createHash("sha256").update(config).digest("hex")}`;
    const repo = `${replicas[0].registryUrl}/v2/${boot.org.name}/app`;
    const blob = await fetch(`${repo}/blobs/uploads/?digest=${digest}`, { method: "POST", headers, body: config });
    assert.equal(blob.status, 201, await blob.text());
    const manifest = JSON.stringify({
      schemaVersion: 2,
      mediaType: "application/vnd.oci.image.manifest.v1+json",
      config: { mediaType: "application/vnd.oci.image.config.v1+json", digest, size: config.length },
      layers: [],
    });
    const put = await fetch(`${repo}/manifests/v1`, { method: "PUT", headers: { ...headers, "content-type": "application/vnd.oci.image.manifest.v1+json" }, body: manifest });
    assert.equal(put.status, 201, await put.text());
  }
  /** The status of pulling `<org>/app:v1`'s manifest from `replica` with a platform token whose audience is the registry. */
  const pull = async (replica: ChildServer, token: string) =>
    (await fetch(`${replica.registryUrl}/v2/${boot.org.name}/app/manifests/v1`, { headers: { authorization: `Bearer ${token}` } })).status;
  /** Milliseconds until `replica`'s registry answers the pull with `status`, polling; fails after 10 s. */
  async function msUntilPull(replica: ChildServer, token: string, status: number, since: number): Promise<number> {
    for (;;) {
      if ((await pull(replica, token)) === status) return performance.now() - since;
      assert.ok(performance.now() - since < 10_000, `the registry still does not answer ${status} after 10 s`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  test("the registry follows the same bound: a binding revoked on one replica stops pulls there at once and on the other within the bound", async () => {
    const [a, b] = replicas;
    await pushImage();
    const caller = await viewer("registry-revoked", "registry.pull", REGISTRY_URL);
    for (let i = 0; i < 5; i++) for (const replica of replicas) assert.equal(await pull(replica, caller.token), 200);

    const revoke = await fetch(`${a.apiUrl}/iam/v2/roleBindings/${caller.binding}`, { method: "DELETE", headers: { authorization: `Bearer ${boot.ownerToken}` } });
    assert.equal(revoke.status, 200, await revoke.text());
    const revokedAt = performance.now();
    assert.equal(await pull(a, caller.token), 403, "the revoking replica's registry refuses at once");
    const elapsed = await msUntilPull(b, caller.token, 403, revokedAt);
    assert.ok(elapsed <= BOUND_MS, `the other replica's registry refused after ${Math.round(elapsed)} ms, bound ${BOUND_MS} ms`);
    for (const replica of replicas) assert.equal(await pull(replica, caller.token), 403, "and stays refused");
  });

  test("on the registry too, a binding revoked outside any replica stops pulls on both within the bound, and a deleted identity's token within the same", async () => {
    const caller = await viewer("registry-outside", "registry.pull", REGISTRY_URL);
    for (let i = 0; i < 5; i++) for (const replica of replicas) assert.equal(await pull(replica, caller.token), 200);
    await store.db.deleteFrom("role_bindings").where("uid", "=", caller.binding).execute();
    const revokedAt = performance.now();
    for (const replica of replicas) {
      const elapsed = await msUntilPull(replica, caller.token, 403, revokedAt);
      assert.ok(elapsed <= BOUND_MS, `refused after ${Math.round(elapsed)} ms, bound ${BOUND_MS} ms`);
    }

    const [a, b] = replicas;
    const deleted = await viewer("registry-deleted", "registry.pull", REGISTRY_URL);
    for (let i = 0; i < 5; i++) for (const replica of replicas) assert.equal(await pull(replica, deleted.token), 200);
    const removed = await fetch(`${a.apiUrl}/iam/v2/identities/${deleted.uid}`, { method: "DELETE", headers: { authorization: `Bearer ${boot.ownerToken}` } });
    assert.equal(removed.status, 200, await removed.text());
    const removedAt = performance.now();
    assert.equal(await pull(a, deleted.token), 401, "the deleting replica's registry refuses at once");
    const elapsed = await msUntilPull(b, deleted.token, 401, removedAt);
    assert.ok(elapsed <= BOUND_MS, `the other replica's registry refused after ${Math.round(elapsed)} ms, bound ${BOUND_MS} ms`);
  });
});
