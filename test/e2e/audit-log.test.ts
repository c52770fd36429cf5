import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { GroupsService } from "../../gen/platform/iam/v2/groups_service_pb.js";
import { newChildUid } from "../../src/aip/uidp.js";
import { builtInRole } from "../../src/access/capabilities.js";
import { bindRole, insertIdentity } from "../../src/domains/iam/index.js";
import { bootstrapChild, startChildServer } from "../support/child-server.js";
import { buildImage, writeLayout } from "../support/oci-layout.js";
import { registryClient } from "../support/registry-push.js";
import { freePort, skopeoSkip } from "../support/skopeo.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { allWires, methodOf, type Wire, type WireName } from "../support/wires.js";
import { BIN } from "../support/repo.js";

/**
 * The audit log (`serve --audit-log`): a line for every changing call on both hosts, naming its
 * actor, refused ones with their code, none for reads; and the registry's own log lines name the
 * caller. Everything goes over real wires: gRPC, Connect and REST on the API host, a registry
 * client, skopeo and `/token` on the registry host.
 */

interface AuditLine {
  time: string;
  msg: string;
  host: "api" | "registry";
  action: string;
  resource: string;
  outcome: string;
  actor: { subject: string; pullToken?: boolean };
  requestId: string;
  protocol?: string;
}

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), "platform-api-audit-"));
const auditPath = join(dir, "audit.log");

describe("the audit log", () => {
  let server: TestServer;
  let wires: Wire[];
  let registryHost: string;
  const createGroup = methodOf(GroupsService, "CreateGroup");
  const getGroup = methodOf(GroupsService, "GetGroup");

  const audit = (): AuditLine[] =>
    readFileSync(auditPath, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as AuditLine);
  /** The audit lines `work` adds. */
  async function linesOf(work: () => Promise<unknown>): Promise<AuditLine[]> {
    const before = audit().length;
    await work();
    return audit().slice(before);
  }
  const logLines = () => server.logs.map((line) => JSON.parse(line) as Record<string, unknown>);
  /** The last log line that `match` accepts. */
  const lastLogLine = (match: (line: Record<string, unknown>) => boolean) => logLines().reverse().find(match);

  /** An identity of the organization bound to `role` there, and its token for `audience` (default the API). */
  async function member(role: "viewer" | "editor", audience = server.apiUrl): Promise<{ uid: string; token: string }> {
    const uid = newChildUid(server.org.uid);
    const now = Date.now();
    await insertIdentity(server.store.db, { uid, group_uid: server.org.uid, name: `a ${role}`, description: "", claim_match: "", static_keys: "", last_seen_time: null, create_time: now, update_time: now });
    await bindRole(server.store.db, server.org.uid, uid, builtInRole(role).uid, now);
    return { uid, token: (await server.server.tokens.issue({ subject: uid, audience })).token };
  }
  const createOver = (wire: Wire, name: string, token?: string) =>
    wire.call(createGroup, { parent: server.org.uid, group: { name } }, { method: "POST", path: `/iam/v2/groups/${server.org.uid}`, body: { name } }, token);
  const wireNamed = (name: WireName) => wires.find((w) => w.name === name)!;

  before(async () => {
    const port = await freePort();
    registryHost = `127.0.0.1:${port}`;
    server = await startTestServer({ auditLog: auditPath, registryUrl: `http://${registryHost}`, registryPort: port, apiUrl: "listen" });
    wires = allWires(server.apiPort);
  });
  after(async () => {
    for (const wire of wires ?? []) wire.close();
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("a change over gRPC, Connect and REST is one line naming the actor, the resource and the call's request id", async () => {
    for (const name of ["grpc", "connect", "rest"] as const) {
      let created = "";
      const lines = await linesOf(async () => {
        const out = await createOver(wireNamed(name), `team ${name}`, server.ownerToken);
        assert.equal(out.code, 0, `${name}: ${out.message}`);
        created = (out.body as { uid: string }).uid;
      });
      assert.equal(lines.length, 1, `${name}: one line`);
      const [line] = lines;
      assert.equal(line.msg, "audit");
      assert.equal(line.host, "api");
      assert.equal(line.action, "platform.iam.v2.GroupsService/CreateGroup");
      assert.equal(line.resource, created, `${name}: the created group`);
      assert.equal(line.outcome, "OK");
      assert.deepEqual(line.actor, { subject: server.ownerUid });
      assert.equal(line.protocol, name);
      assert.ok(!Number.isNaN(Date.parse(line.time)));
      // The same request id as the call's access log line, which stays in the log (the audit line does not).
      const call = logLines().find((l) => l.msg === "call" && l.procedure === "/platform.iam.v2.GroupsService/CreateGroup" && l.protocol === name);
      assert.ok(call, `${name}: the access log has the call`);
      assert.equal(line.requestId, call.requestId, `${name}: one request id`);
    }
    assert.ok(!server.logs.some((l) => l.includes('"msg":"audit"')), "audit lines are not in the access log");
  });

  test("a refused change is a line with its code and the actor; one without a credential names anonymous", async () => {
    const viewer = await member("viewer");
    for (const name of ["grpc", "connect", "rest"] as const) {
      const [denied, ...more] = await linesOf(async () => assert.equal((await createOver(wireNamed(name), "not mine", viewer.token)).code, 7));
      assert.equal(more.length, 0);
      assert.equal(denied.outcome, "PERMISSION_DENIED", name);
      assert.deepEqual(denied.actor, { subject: viewer.uid }, name);
      assert.equal(denied.resource, server.org.uid, `${name}: the parent it was refused on`);
      const [anonymous] = await linesOf(async () => assert.equal((await createOver(wireNamed(name), "nobody's")).code, 16));
      assert.equal(anonymous.outcome, "UNAUTHENTICATED", name);
      assert.deepEqual(anonymous.actor, { subject: "anonymous" }, name);
      const [forged] = await linesOf(async () => assert.equal((await createOver(wireNamed(name), "forged", "not-a-token")).code, 16));
      assert.equal(forged.outcome, "UNAUTHENTICATED", name);
    }
  });

  test("a read writes nothing", async () => {
    const lines = await linesOf(async () => {
      for (const wire of wires) {
        const out = await wire.call(getGroup, { uid: server.org.uid }, { method: "GET", path: `/iam/v2/groups/${server.org.uid}` }, server.ownerToken);
        assert.equal(out.code, 0, wire.name);
      }
      const listed = await fetch(`${server.apiUrl}/iam/v2/groups?uidp.children_of=${server.org.uid}`, { headers: { authorization: `Bearer ${server.ownerToken}` } });
      assert.equal(listed.status, 200);
      assert.equal((await fetch(`${server.apiUrl}/ping/v2/ping`)).status, 200);
    });
    assert.deepEqual(lines, []);
  });

  test("a push, a tag moved by another push and a tag delete on the registry host name their actor; a refused push too", async () => {
    const editor = await member("editor", server.registryUrl);
    const client = registryClient([server.registryUrl], (await server.server.tokens.issue({ subject: server.ownerUid, audience: server.registryUrl })).token);
    const image = buildImage({ architecture: "amd64", layerBytes: [1000] });
    const pushed = await linesOf(() => client.pushImage("acme/app", "v1", image));
    assert.deepEqual(
      pushed.map((l) => [l.action, l.resource, l.outcome]),
      [
        ["registry.blob.upload", `acme/app@${image.config.digest}`, "OK"],
        ["registry.blob.upload", `acme/app@${image.layers[0].digest}`, "OK"],
        ["registry.manifest.put", `acme/app:v1@${image.manifest.digest}`, "OK"],
      ],
    );
    for (const line of pushed) {
      assert.deepEqual(line.actor, { subject: server.ownerUid });
      assert.equal(line.host, "registry");
      assert.ok(!("protocol" in line));
    }
    // The registry's log line of the manifest PUT names the caller and has the audit line's request id.
    const put = logLines().find((l) => l.msg === "request" && l.host === "registry" && l.route === "manifest" && l.method === "PUT");
    assert.equal(put?.subject, server.ownerUid);
    assert.equal(put?.requestId, pushed[2].requestId);

    // The editor moves the tag to another image; then deletes it.
    const other = buildImage({ architecture: "arm64", layerBytes: [1200] });
    const editorClient = registryClient([server.registryUrl], editor.token);
    const moved = await linesOf(() => editorClient.pushImage("acme/app", "v1", other));
    assert.deepEqual(moved.at(-1), { ...moved.at(-1), action: "registry.manifest.put", resource: `acme/app:v1@${other.manifest.digest}`, actor: { subject: editor.uid } });
    const deleted = await linesOf(async () => assert.equal((await editorClient.request("DELETE", "/v2/acme/app/manifests/v1")).status, 202));
    assert.deepEqual(
      deleted.map((l) => [l.action, l.resource, l.outcome, l.actor.subject]),
      [["registry.tag.delete", "acme/app:v1", "OK", editor.uid]],
    );
    const byDigest = await linesOf(async () => assert.equal((await client.request("DELETE", `/v2/acme/app/manifests/${image.manifest.digest}`)).status, 202));
    assert.deepEqual(byDigest.map((l) => [l.action, l.resource, l.actor.subject]), [["registry.manifest.delete", `acme/app@${image.manifest.digest}`, server.ownerUid]]);

    // A viewer may not push: refused with DENIED, and recorded with the viewer as actor.
    const viewer = await member("viewer", server.registryUrl);
    const refused = await linesOf(async () => {
      const res = await registryClient([server.registryUrl], viewer.token).request("PUT", "/v2/acme/app/manifests/v2", { body: image.manifest.bytes, headers: { "content-type": image.manifest.mediaType } });
      assert.equal(res.status, 403);
    });
    assert.deepEqual(refused.map((l) => [l.action, l.resource, l.outcome, l.actor.subject]), [["registry.manifest.put", "acme/app:v2", "DENIED", viewer.uid]]);

    // Without a credential nothing is known of the caller: the log line says so, and the handshake's 401 is not audited.
    const challenged = await linesOf(async () => assert.equal((await fetch(`${server.registryUrl}/v2/acme/app/manifests/v3`, { method: "PUT", body: "{}" })).status, 401));
    assert.deepEqual(challenged, []);
    const challenge = lastLogLine((l) => l.msg === "request" && l.host === "registry" && l.status === 401);
    assert.equal(challenge?.subject, null);
  });

  test("skopeo's push is audited with the actor; a pull token's /token is a line naming the pull token", { skip: skopeoSkip }, async () => {
    const layout = writeLayout(join(dir, "image"), { architectures: ["amd64"], ref: "v1", layerBytes: [5000] });
    const { token: platform } = await server.server.tokens.issue({ subject: server.ownerUid, audience: server.registryUrl });
    const skopeo = (...args: string[]) => run("skopeo", ["--insecure-policy", ...args], { timeout: 60_000, env: { ...process.env, HOME: dir } });
    const pushed = await linesOf(() => skopeo("copy", "--dest-tls-verify=false", "--dest-creds", `_token:${platform}`, `oci:${layout.dir}:v1`, `docker://${registryHost}/acme/tools:v1`));
    assert.ok(pushed.some((l) => l.action === "registry.manifest.put" && l.resource === `acme/tools:v1@${layout.top.digest}`));
    for (const line of pushed) assert.deepEqual([line.actor, line.outcome], [{ subject: server.ownerUid }, "OK"], JSON.stringify(line));
    // skopeo asked /token with Basic _token:<platform token>: its log line says how.
    const issued = lastLogLine((l) => l.msg === "request" && l.route === "token");
    assert.deepEqual([issued?.subject, issued?.credential], [server.ownerUid, "basic"]);

    const pullToken = await fetch(`${server.apiUrl}/iam/v2/pullTokens/${server.org.uid}`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.ownerToken}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "cluster pulls" }),
    });
    assert.equal(pullToken.status, 200);
    const { username, password } = (await pullToken.json()) as { username: string; password: string };
    const used = await linesOf(() => skopeo("copy", "--src-tls-verify=false", "--src-creds", `${username}:${password}`, `docker://${registryHost}/acme/tools:v1`, `oci:${join(dir, "pulled")}:v1`));
    assert.ok(used.length >= 1, "the pull token's /token is recorded");
    for (const line of used) {
      assert.equal(line.action, "registry.pull_token.use");
      assert.match(line.resource, /^repository:acme\/tools:pull/);
      assert.deepEqual([line.actor, line.outcome], [{ subject: username, pullToken: true }, "OK"]);
    }
    const tokenLine = lastLogLine((l) => l.msg === "request" && l.route === "token");
    assert.deepEqual([tokenLine?.subject, tokenLine?.pullToken, tokenLine?.credential], [username, true, "pull_token"]);
    // The pull's own requests (reads: not audited) name the pull token in their log lines.
    const pulled = lastLogLine((l) => l.msg === "request" && l.route === "blob");
    assert.deepEqual([pulled?.subject, pulled?.pullToken], [username, true]);
  });

  test("/token without credentials names the caller anonymous and writes no audit line", async () => {
    const lines = await linesOf(async () => assert.equal((await fetch(`${server.registryUrl}/token?scope=registry:catalog:*`)).status, 200));
    assert.deepEqual(lines, []);
    const line = lastLogLine((l) => l.msg === "request" && l.route === "token");
    assert.deepEqual([line?.subject, line?.credential], ["anonymous", "none"]);
  });

  test("every line is whole JSON, and the write failures metric is there at zero", async () => {
    const text = readFileSync(auditPath, "utf8");
    assert.ok(text.endsWith("\n"));
    for (const line of audit()) assert.ok(line.actor.subject !== "" && line.requestId !== "" && line.action !== "" && line.outcome !== "");
    const metrics = await (await fetch(`http://127.0.0.1:${server.metricsPort}/metrics`)).text();
    assert.match(metrics, /^audit_log_write_failures_total 0$/m);
  });
});

describe("serve --audit-log", () => {
  const folder = mkdtempSync(join(tmpdir(), "platform-api-audit-serve-"));
  after(() => rmSync(folder, { recursive: true, force: true }));

  test("a file that cannot be opened stops serve at once, in one line naming it, before the store is opened", async () => {
    const db = join(folder, "never.db");
    const failed = await run(process.execPath, [BIN, "serve", "--db", db, "--port", "0", "--registry-port", "0", "--audit-log", join(folder, "missing", "audit.log")], {
      env: { ...process.env, DATABASE_URL: "", METRICS_PORT: "0" },
    }).then(
      () => assert.fail("serve started"),
      (error: { code: number; stderr: string }) => error,
    );
    assert.equal(failed.code, 2);
    assert.match(failed.stderr, /^platform-api: --audit-log: cannot open the audit log \S+\/missing\/audit\.log for appending: ENOENT/);
    assert.doesNotMatch(failed.stderr, /\n\s+at /);
    assert.ok(!existsSync(db), "the store was not opened");
  });

  test("the env twin AUDIT_LOG; SIGHUP reopens the file by its path (logrotate)", async () => {
    const db = join(folder, "platform.db");
    const path = join(folder, "audit.log");
    const boot = await bootstrapChild(db, "acme");
    const child = await startChildServer({ db, registryDir: join(folder, "registry"), env: { AUDIT_LOG: path } });
    const createFolder = async (name: string) => {
      const res = await fetch(`${child.apiUrl}/iam/v2/groups/${boot.org.uid}`, {
        method: "POST",
        headers: { authorization: `Bearer ${boot.ownerToken}`, "content-type": "application/json" },
        body: JSON.stringify({ name }),
      });
      assert.equal(res.status, 200, await res.text());
    };
    const subjects = (file: string) => readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => (JSON.parse(l) as AuditLine).actor.subject);
    try {
      await createFolder("before rotation");
      assert.deepEqual(subjects(path), [boot.ownerUid]);
      renameSync(path, `${path}.1`);
      child.child.kill("SIGHUP");
      for (let i = 0; i < 100 && !existsSync(path); i++) await new Promise((resolve) => setTimeout(resolve, 50));
      await createFolder("after rotation");
      assert.deepEqual(subjects(`${path}.1`), [boot.ownerUid]);
      assert.deepEqual(subjects(path), [boot.ownerUid], "the new file has the call after SIGHUP");
    } finally {
      child.child.kill("SIGTERM");
      await child.exit;
    }
  });
});
