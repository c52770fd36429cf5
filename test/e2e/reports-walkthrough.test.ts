import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { after, before, test } from "node:test";
import { RUSTSEC_DIR } from "../support/osv-records.js";
import { freePort, skopeoSkip } from "../support/skopeo.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { BIN, ROOT } from "../support/repo.js";

/**
 * The README's vulnerability-report walkthrough, as a user runs it: the advisories imported with the
 * command line, two images built by scripts/oci-layout-of.sh from real Cargo.lock files, pushed with
 * skopeo to one tag, the first image's report and the day's resolved vulnerabilities over REST.
 */

const run = promisify(execFile);
const skip = skopeoSkip;

const dir = mkdtempSync(join(tmpdir(), "platform-api-reports-readme-"));
let server: TestServer;
let host: string;
let creds: string;

before(async () => {
  if (skip) return;
  await run(process.execPath, [BIN, "advisories", "import", RUSTSEC_DIR, "--db", join(dir, "platform.db")]);
  const port = await freePort();
  host = `127.0.0.1:${port}`;
  server = await startTestServer({ dbUrl: join(dir, "platform.db"), registryUrl: `http://${host}`, registryPort: port });
  creds = `_token:${(await server.server.tokens.issue({ subject: server.ownerUid, audience: `http://${host}` })).token}`;
});
after(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

const skopeo = (...args: string[]) => run("skopeo", ["--insecure-policy", ...args], { timeout: 60_000, env: { ...process.env, HOME: dir } }).then((r) => r.stdout.trim());
const get = async (path: string) => {
  const res = await fetch(`${server.apiUrl}${path}`, { headers: { authorization: `Bearer ${server.ownerToken}` } });
  assert.equal(res.status, 200, path);
  return (await res.json()) as Record<string, unknown>;
};
/** The report is computed after the push: ask again until `done` says so (at most 30 s). */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (let i = 0; ; i++) {
    const value = await read();
    if (done(value) || i >= 300) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

test("push a vulnerable image, read its report, move the tag to a fixed image, list what that resolved today", { skip }, async () => {
  const layout = (name: string, tag: string, lock: string) =>
    run("bash", [join(ROOT, "scripts/oci-layout-of.sh"), join(dir, name), tag, `srv/app/Cargo.lock=${join(ROOT, "test/fixtures/inventory", lock)}`]).then((r) => r.stdout.trim());
  const v1Digest = await layout("shop-v1", "v1", "nickel.Cargo.lock");
  const v2Digest = await layout("shop-v2", "v2", "normal.Cargo.lock");
  await skopeo("copy", "--dest-tls-verify=false", "--dest-creds", creds, `oci:${join(dir, "shop-v1")}:v1`, `docker://${host}/acme/shop:latest`);
  const shop = ((await get("/registry/v2/repos?name=shop")).repos as Array<{ uid: string }>)[0].uid;
  const v1 = await skopeo("inspect", "--tls-verify=false", "--creds", creds, `docker://${host}/acme/shop:latest`, "--format", "{{.Digest}}");
  assert.equal(v1, v1Digest);

  type Report = { status: string; vulnerabilities: Array<{ advisoryId: string; aliases: string[]; package: string; installedVersion: string; fixedVersion: string; severity: string; score?: number }>; counts: Record<string, number>; packageCount: number };
  const report = (await until(() => get(`/registry/v2/repos/${shop}/digests/${v1}/vulnerabilityReport`), (r) => r.status !== "STATUS_PENDING")) as unknown as Report;
  assert.equal(report.status, "STATUS_DONE");
  assert.equal(report.packageCount, 47);
  assert.equal(report.vulnerabilities[0].advisoryId, "RUSTSEC-2019-0009", "the README's first line: CRITICAL first, then by id");
  const smallvec = report.vulnerabilities[0];
  assert.deepEqual(
    { aliases: smallvec.aliases, package: smallvec.package, installedVersion: smallvec.installedVersion, fixedVersion: smallvec.fixedVersion, severity: smallvec.severity, score: smallvec.score },
    { aliases: ["CVE-2019-15551", "GHSA-mm7v-vpv8-xfc3"], package: "pkg:cargo/smallvec@0.6.9", installedVersion: "0.6.9", fixedVersion: "0.6.10", severity: "SEVERITY_CRITICAL", score: 9.8 },
  );
  assert.equal(Object.values(report.counts).reduce((a, b) => a + b, 0), report.vulnerabilities.length);

  await skopeo("copy", "--dest-tls-verify=false", "--dest-creds", creds, `oci:${join(dir, "shop-v2")}:v2`, `docker://${host}/acme/shop:latest`);
  const today = new Date().toISOString().slice(0, 10);
  type Listed = { resolvedVulnsReports?: Array<{ date: string; resolvedVulns: Array<{ id: string; package: string }>; repo: string; repoName: string; tag: string; fromDigest: string; toDigest: string }>; totalCount: string };
  const listed = (await until(() => get(`/advisory/v2/images/resolvedVulns?start_time=${today}`), (r) => r.totalCount !== "0")) as unknown as Listed;
  assert.equal(listed.totalCount, "1");
  const day = listed.resolvedVulnsReports![0];
  assert.deepEqual([day.date, day.repo, day.repoName, day.tag, day.fromDigest, day.toDigest], [`${today}T00:00:00.000Z`, shop, "shop", "latest", v1Digest, v2Digest]);
  assert.deepEqual(day.resolvedVulns.map((v) => v.id).sort(), [...new Set(report.vulnerabilities.map((v) => v.advisoryId))].sort());
  assert.ok(day.resolvedVulns.some((v) => v.id === "RUSTSEC-2021-0078" && v.package === "pkg:cargo/hyper@0.10.16"));
  assert.deepEqual([day.resolvedVulns[0].id, day.resolvedVulns[0].package], ["RUSTSEC-2018-0018", "pkg:cargo/smallvec@0.6.9"], "the README's first line");
});
