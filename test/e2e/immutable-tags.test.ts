import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import type { JsonObject } from "@bufbuild/protobuf";
import { Registry } from "../../gen/platform/registry/v1/registry_pb.js";
import { ReposService } from "../../gen/platform/registry/v2/repos_service_pb.js";
import { TagsService } from "../../gen/platform/registry/v2/tags_service_pb.js";
import { newChildUid } from "../../src/aip/uidp.js";
import { builtInRole } from "../../src/access/capabilities.js";
import { insertIdentity } from "../../src/domains/iam/store/identities.js";
import { bindRole } from "../../src/domains/iam/store/role-bindings.js";
import { findRepoByPath } from "../../src/domains/registry/store/repos.js";
import { findTagByName } from "../../src/domains/registry/store/tags.js";
import { testDatabases } from "../support/databases.js";
import { serveOverWires } from "../support/over-wires.js";
import { freePort, skopeoSkip } from "../support/skopeo.js";
import type { TestServer } from "../support/test-server.js";
import { detailOf, methodOf, reasonOf, violatedFields, type Outcome, type RestRequest } from "../support/wires.js";

/**
 * Immutable tags (`Repo.immutable_tags`): set and read over the four wires of the API host (and
 * kept by v1's UpdateRepo, whose Repo lacks the field), enforced on CreateTag, v1's UpdateTag and
 * DeleteTag there, and on pushes and deletes of the registry host driven by skopeo, on each database.
 */

const run = promisify(execFile);
const digest = (n: number) => `sha256:${n.toString(16).padStart(64, "0")}`;
const dir = mkdtempSync(join(tmpdir(), "platform-api-immutable-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Asserts the refusal of a change to an immutable tag: FAILED_PRECONDITION, reason TAG_IMMUTABLE, naming tag and pattern. */
function assertImmutable(out: Outcome, tag: string, pattern: string, wireName: string): void {
  assert.equal(out.code, 9, out.message);
  assert.equal(reasonOf(out), "TAG_IMMUTABLE");
  assert.match(out.message ?? "", new RegExp(`tag ${tag} matches the immutable tag pattern "${pattern.replace("*", "\\*")}"`));
  assert.deepEqual(detailOf(out, "ErrorInfo")?.metadata, { tag, pattern });
  assert.equal((detailOf(out, "PreconditionFailure")?.violations as JsonObject[])[0].type, "TAG_IMMUTABLE");
  if (wireName === "rest") assert.equal(out.httpStatus, 400);
}

/** An identity of the organization bound to each of `roleUids` there. */
async function memberWith(server: TestServer, roleUids: string[]): Promise<{ server: TestServer; uid: string }> {
  const uid = newChildUid(server.org.uid);
  const now = Date.now();
  await insertIdentity(server.store.db, { uid, group_uid: server.org.uid, name: "member", description: "", claim_match: "", static_keys: "", last_seen_time: null, create_time: now, update_time: now });
  for (const role of roleUids) await bindRole(server.store.db, server.org.uid, uid, role, now);
  return { server, uid };
}

async function tokenOf({ server, uid }: { server: TestServer; uid: string }): Promise<string> {
  return (await server.server.tokens.issue({ subject: uid, audience: "http://api.test" })).token;
}

/** A custom role of the organization holding `capabilities`, made by its owner over REST. */
async function customRole(server: TestServer, capabilities: string[]): Promise<string> {
  const res = await fetch(`${server.apiUrl}/iam/v2/roles/${server.org.uid}`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.ownerToken}`, "content-type": "application/json" },
    body: JSON.stringify({ name: `unlock-${newChildUid(server.org.uid).slice(-16)}`, capabilities }),
  });
  assert.equal(res.status, 200, await res.clone().text());
  return ((await res.json()) as { uid: string }).uid;
}

for (const database of await testDatabases()) {
  const registryPort = await freePort();
  describe(`immutable tags on ${database.name}`, { skip: database.skip }, () => {
    const registryUrl = `http://127.0.0.1:${registryPort}`;
    const served = serveOverWires({ database, registryUrl, registryPort });

    served.describeOverWires("the API", ({ server, wire, wireName }) => {
      const call = (service: typeof ReposService | typeof TagsService | typeof Registry, name: string, request: JsonObject, rest: RestRequest) =>
        wire().call(methodOf(service, name), request, rest, server().ownerToken);
      const createRepo = (repo: JsonObject) =>
        call(ReposService, "CreateRepo", { parent: server().org.uid, repo }, { method: "POST", path: `/registry/v2/repos/${server().org.uid}`, body: repo });
      const updateRepo = (uid: string, repo: JsonObject, mask: string) =>
        call(ReposService, "UpdateRepo", { repo: { uid, ...repo }, updateMask: mask.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()) }, { method: "PATCH", path: `/registry/v2/repos/${uid}?updateMask=${mask}`, body: repo });
      const getRepo = (uid: string) => call(ReposService, "GetRepo", { uid }, { method: "GET", path: `/registry/v2/repos/${uid}` });
      const createTag = (parent: string, tag: JsonObject) => call(TagsService, "CreateTag", { parent, tag }, { method: "POST", path: `/registry/v2/tags/${parent}`, body: tag });
      const getTag = (uid: string) => call(TagsService, "GetTag", { uid }, { method: "GET", path: `/registry/v2/tags/${uid}` });

      test("set with CreateRepo, changed and cleared with UpdateRepo's mask, read back", async () => {
        const made = await createRepo({ name: `${wireName}/set`, immutableTags: ["v*", "stable"] });
        assert.equal(made.code, 0, made.message);
        const uid = made.body!.uid as string;
        assert.deepEqual((await getRepo(uid)).body?.immutableTags, ["v*", "stable"]);
        const changed = await updateRepo(uid, { description: "ignored", immutableTags: ["release-*", "v*.*"] }, "immutable_tags");
        assert.equal(changed.code, 0, changed.message);
        assert.deepEqual(changed.body?.immutableTags, ["release-*", "v*.*"]);
        assert.equal(changed.body?.description, undefined, "a field outside the mask is left alone");
        assert.deepEqual((await getRepo(uid)).body?.immutableTags, ["release-*", "v*.*"]);
        const renamed = await updateRepo(uid, { name: `${wireName}/set2` }, "name");
        assert.deepEqual(renamed.body?.immutableTags, ["release-*", "v*.*"], "a mask without the field keeps it");
        const v1Repo = { id: uid, name: `${wireName}/set3`, description: "by v1" };
        const v1Put = await call(Registry, "UpdateRepo", v1Repo, { method: "PUT", path: `/registry/v1/repos/${uid}`, body: v1Repo });
        assert.equal(v1Put.code, 0, v1Put.message);
        assert.deepEqual((await getRepo(uid)).body?.immutableTags, ["release-*", "v*.*"], "v1's Repo has no such field, and its PUT keeps it");
        const cleared = await updateRepo(uid, {}, "immutable_tags");
        assert.equal(cleared.code, 0, cleared.message);
        assert.equal(cleared.body?.immutableTags, undefined);
      });

      test("invalid patterns are INVALID_ARGUMENT naming each", async () => {
        const bad = await createRepo({ name: `${wireName}/bad`, immutableTags: ["v*", "a/b", "", "x".repeat(129), "v*", "ok?"] });
        assert.equal(bad.code, 3, bad.message);
        assert.equal(reasonOf(bad), "INVALID_ARGUMENT");
        assert.deepEqual(violatedFields(bad), ["repo.immutable_tags[1]", "repo.immutable_tags[2]", "repo.immutable_tags[3]", "repo.immutable_tags[4]", "repo.immutable_tags[5]"]);
        const many = await createRepo({ name: `${wireName}/many`, immutableTags: Array.from({ length: 33 }, (_, i) => `t${i}`) });
        assert.equal(many.code, 3);
        assert.deepEqual(violatedFields(many), ["repo.immutable_tags"]);
        const uid = (await createRepo({ name: `${wireName}/good`, immutableTags: Array.from({ length: 32 }, (_, i) => `t${i}*`) })).body!.uid as string;
        const update = await updateRepo(uid, { immutableTags: ["fine", "not fine"] }, "immutable_tags");
        assert.equal(update.code, 3);
        assert.deepEqual(violatedFields(update), ["repo.immutable_tags[1]"]);
        if (wireName === "rest") assert.equal(update.httpStatus, 400);
        assert.equal(((await getRepo(uid)).body?.immutableTags as string[]).length, 32, "a refused update changes nothing");
      });

      test("CreateTag and v1 UpdateTag may create a tag and repeat its digest, never move it; DeleteTag is refused", async () => {
        const repoUid = (await createRepo({ name: `${wireName}/tags`, immutableTags: ["v*"] })).body!.uid as string;
        const first = await createTag(repoUid, { name: "v1", digest: digest(1) });
        assert.equal(first.code, 0, first.message);
        const tagUid = first.body!.uid as string;
        const again = await createTag(repoUid, { name: "v1", digest: digest(1), deprecated: true });
        assert.equal(again.code, 0, "the same digest is no move (deprecated may change)");
        assertImmutable(await createTag(repoUid, { name: "v1", digest: digest(2) }), "v1", "v*", wireName);

        const v1Tag = { id: tagUid, digest: digest(3) };
        const updated = await call(Registry, "UpdateTag", v1Tag, { method: "PUT", path: `/registry/v1/tags/${tagUid}`, body: v1Tag });
        assertImmutable(updated, "v1", "v*", wireName);

        assertImmutable(await call(TagsService, "DeleteTag", { uid: tagUid }, { method: "DELETE", path: `/registry/v2/tags/${tagUid}` }), "v1", "v*", wireName);
        const v1Delete = await call(Registry, "DeleteTag", { id: tagUid }, { method: "DELETE", path: `/registry/v1/tags/${tagUid}` });
        assert.equal(v1Delete.code, 9, "v1 refuses a delete without saying why (spec 9.3)");
        assert.equal((await getTag(tagUid)).body?.digest, digest(1), "the tag stayed where it was");

        assert.equal((await createTag(repoUid, { name: "latest", digest: digest(1) })).code, 0);
        assert.equal((await createTag(repoUid, { name: "latest", digest: digest(2) })).code, 0, "a tag no pattern matches moves");
        // Clearing the setting frees the tag.
        assert.equal((await updateRepo(repoUid, {}, "immutable_tags")).code, 0);
        assert.equal((await createTag(repoUid, { name: "v1", digest: digest(2) })).code, 0);
      });

      test("an editor may add immutable tag patterns but not remove one; lifting needs registry.immutable_tags.unlock (owner)", async () => {
        const editor = await tokenOf(await memberWith(server(), [builtInRole("editor").uid]));
        const asEditor = (uid: string, repo: JsonObject, mask: string) =>
          wire().call(
            methodOf(ReposService, "UpdateRepo"),
            { repo: { uid, ...repo }, updateMask: mask.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()) },
            { method: "PATCH", path: `/registry/v2/repos/${uid}?updateMask=${mask}`, body: repo },
            editor,
          );
        const repoUid = (await createRepo({ name: `${wireName}/locked`, immutableTags: ["v*"] })).body!.uid as string;
        assert.equal((await createTag(repoUid, { name: "v1", digest: digest(1) })).code, 0);

        const added = await asEditor(repoUid, { immutableTags: ["v*", "release-*"] }, "immutable_tags");
        assert.equal(added.code, 0, `adding a pattern is repo.update alone: ${added.message}`);
        const lifts: Array<[JsonObject, string]> = [
          [{ immutableTags: [] }, "immutable_tags"],
          [{ immutableTags: ["release-*"] }, "immutable_tags"],
          [{ immutableTags: ["v1*", "release-*"] }, "immutable_tags"],
          [{ name: `${wireName}/locked2` }, "*"],
        ];
        for (const [repo, mask] of lifts) {
          const lifted = await asEditor(repoUid, repo, mask);
          assert.equal(lifted.code, 7, `${JSON.stringify(repo)} ${mask}: ${lifted.message}`);
          assert.match(lifted.message ?? "", /"v\*".*CAP_REGISTRY_IMMUTABLE_TAGS_UNLOCK/);
          if (wireName === "rest") assert.equal(lifted.httpStatus, 403);
        }
        assert.deepEqual((await getRepo(repoUid)).body?.immutableTags, ["v*", "release-*"], "a refused lift changes nothing");
        assertImmutable(await createTag(repoUid, { name: "v1", digest: digest(2) }), "v1", "v*", wireName);
        const renamed = await asEditor(repoUid, { name: `${wireName}/locked3` }, "name");
        assert.equal(renamed.code, 0, "a mask without the field keeps the patterns: no lift");

        const unlocker = await tokenOf(await memberWith(server(), [builtInRole("editor").uid, await customRole(server(), ["CAP_REGISTRY_IMMUTABLE_TAGS_UNLOCK"])]));
        const lifted = await wire().call(
          methodOf(ReposService, "UpdateRepo"),
          { repo: { uid: repoUid }, updateMask: "immutableTags" },
          { method: "PATCH", path: `/registry/v2/repos/${repoUid}?updateMask=immutable_tags`, body: {} },
          unlocker,
        );
        assert.equal(lifted.code, 0, `a role with the capability lifts them: ${lifted.message}`);
        assert.equal((await createTag(repoUid, { name: "v1", digest: digest(2) })).code, 0, "and the tag moves");
        assert.equal((await updateRepo(repoUid, { immutableTags: ["v*"] }, "immutable_tags")).code, 0);
        assert.equal((await updateRepo(repoUid, {}, "immutable_tags")).code, 0, "the owner holds it");
      });
    });

    describe("the registry host, pushed to with skopeo", { skip: skopeoSkip }, () => {
      let creds: string;
      let platformToken: string;
      const home = join(dir, database.name);
      const host = `127.0.0.1:${registryPort}`;
      const skopeo = async (...args: string[]) =>
        (await run("skopeo", ["--insecure-policy", ...args], { timeout: 60_000, env: { ...process.env, HOME: home } })).stdout;
      const push = (layout: string, target: string) => skopeo("copy", "--dest-tls-verify=false", "--dest-creds", creds, `oci:${layout}:img`, `docker://${host}/${target}`);
      const inspectDigest = async (target: string) => (await skopeo("inspect", "--tls-verify=false", "--creds", creds, `docker://${host}/${target}`, "--format", "{{.Digest}}")).trim();
      /** An OCI layout of one image holding `text` (scripts/oci-layout-of.sh); its manifest digest and bytes. */
      const layout = async (name: string, text: string) => {
        const file = join(dir, `${database.name}-${name}.txt`);
        writeFileSync(file, text);
        const out = join(home, name);
        const manifestDigest = (await run("scripts/oci-layout-of.sh", [out, "img", `etc/motd=${file}`])).stdout.trim();
        return { dir: out, digest: manifestDigest, bytes: readFileSync(join(out, "blobs", "sha256", manifestDigest.slice("sha256:".length))) };
      };
      const registry = (method: string, path: string, body?: Buffer) =>
        fetch(`${registryUrl}${path}`, {
          method,
          body: body === undefined ? undefined : new Uint8Array(body),
          headers: { authorization: `Bearer ${platformToken}`, ...(body ? { "content-type": "application/vnd.oci.image.manifest.v1+json" } : {}) },
        });
      const tagDigest = async (name: string) => {
        const repo = await findRepoByPath(served.server().store.db, "acme", "app");
        return (await findTagByName(served.server().store.db, repo!.uid, name))?.digest;
      };

      before(async () => {
        platformToken = (await served.server().server.tokens.issue({ subject: served.server().ownerUid, audience: registryUrl })).token;
        creds = `_token:${platformToken}`;
      });

      test("a v* tag is pushed once and stays; latest moves; deletes are DENIED", async () => {
        const one = await layout("one", "first image\n");
        const two = await layout("two", "second image\n");
        await push(one.dir, "acme/app:latest");
        const repo = await findRepoByPath(served.server().store.db, "acme", "app");
        assert.equal(repo?.immutable_tags, "[]", "a repo a push creates has no immutable tags");
        const set = await fetch(`http://127.0.0.1:${served.server().apiPort}/registry/v2/repos/${repo!.uid}?updateMask=immutable_tags`, {
          method: "PATCH",
          headers: { authorization: `Bearer ${served.server().ownerToken}`, "content-type": "application/json" },
          body: JSON.stringify({ immutableTags: ["v*"] }),
        });
        assert.equal(set.status, 200, await set.text());

        await push(one.dir, "acme/app:v1");
        await assert.rejects(push(two.dir, "acme/app:v1"), /denied|tag v1 matches the immutable tag pattern/i);
        assert.equal(await inspectDigest("acme/app:v1"), one.digest, "the tag still points at the first image");
        await push(one.dir, "acme/app:v1");
        assert.equal(await tagDigest("v1"), one.digest, "pushing the same image again is no move");

        const put = await registry("PUT", "/v2/acme/app/manifests/v1", two.bytes);
        assert.equal(put.status, 403);
        const refused = ((await put.json()) as { errors: Array<{ code: string; message: string; detail: unknown }> }).errors[0];
        assert.equal(refused.code, "DENIED");
        assert.match(refused.message, /tag v1 matches the immutable tag pattern "v\*" of its repo: it points at sha256:[0-9a-f]{64} and cannot move to sha256:/);
        assert.deepEqual(refused.detail, { tag: "v1", pattern: "v*" });

        await push(two.dir, "acme/app:latest");
        assert.equal(await tagDigest("latest"), two.digest);
        await push(one.dir, "acme/app:latest");
        assert.equal(await tagDigest("latest"), one.digest, "latest moves back and forth");

        // skopeo deletes by digest (the manifest v1 and latest point at): refused, as v1 would go with it.
        await assert.rejects(skopeo("delete", "--tls-verify=false", "--creds", creds, `docker://${host}/acme/app:v1`), /denied|immutable/i);
        const byTag = await registry("DELETE", "/v2/acme/app/manifests/v1");
        assert.equal(byTag.status, 403);
        assert.equal(((await byTag.json()) as { errors: Array<{ code: string; message: string }> }).errors[0].code, "DENIED");
        assert.equal(await tagDigest("v1"), one.digest, "the tag survives");
        assert.equal(await tagDigest("latest"), one.digest, "and so does every tag of the refused manifest delete");

        // Tags no pattern matches are deleted as before, by tag and by digest.
        assert.equal((await registry("DELETE", "/v2/acme/app/manifests/latest")).status, 202);
        await push(two.dir, "acme/app:dev");
        assert.equal((await registry("DELETE", `/v2/acme/app/manifests/${two.digest}`)).status, 202);
        assert.equal(await tagDigest("dev"), undefined);
      });
    });
  });
}
