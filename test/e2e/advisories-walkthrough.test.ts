import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { after, before, test } from "node:test";
import { bufCurl, bufCurlSkip } from "../support/buf-curl.js";
import { RUSTSEC_DIR } from "../support/osv-records.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { BIN } from "../support/repo.js";

/**
 * The README's advisories walkthrough: the import command on the shipped RustSec feed, then the
 * queries over REST (curl), Connect (curl with JSON) and gRPC (buf curl), and documents and
 * metadata without a token.
 */

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), "platform-api-advisories-readme-"));
const db = join(dir, "platform.db");
let server: TestServer;

before(async () => {
  const imported = await run(process.execPath, [BIN, "advisories", "import", RUSTSEC_DIR, "--db", db], { encoding: "utf8" });
  assert.equal(imported.stdout, "read 1206, new 1206, updated 0, unchanged 0, rejected 0\n");
  server = await startTestServer({ dbUrl: db });
});
after(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

const api = () => `http://127.0.0.1:${server.apiPort}`;
const auth = () => ({ authorization: `Bearer ${server.ownerToken}` });
type Body = Record<string, unknown> & { advisories?: Array<Record<string, unknown>> };
const getJson = async (path: string, headers: Record<string, string> = auth()) => {
  const res = await fetch(`${api()}${path}`, { headers });
  assert.equal(res.status, 200, path);
  return (await res.json()) as Body;
};
const ids = (body: Body) => (body.advisories ?? []).map((a) => a.advisoryId as string).sort();

const AT_0_10_50 = ["RUSTSEC-2023-0044", "RUSTSEC-2023-0072", "RUSTSEC-2024-0357", "RUSTSEC-2025-0004", "RUSTSEC-2025-0022"];

test("which advisories affect openssl 0.10.50, and which record is CVE-2016-10931, over REST and Connect", async () => {
  const rest = await getJson("/vulnerabilities/v2/advisories?artifactNames=openssl&ecosystem=crates.io&version=0.10.50");
  assert.deepEqual(ids(rest), AT_0_10_50);
  assert.equal(rest.totalCount, "5");
  const first = rest.advisories!.find((a) => a.advisoryId === "RUSTSEC-2023-0044")!;
  assert.deepEqual(
    (first.events as Array<Record<string, unknown>>).map((e) => e.introduced ?? e.fixed),
    ["0.0.0-0", "0.10.55"],
  );
  assert.deepEqual(ids(await getJson("/vulnerabilities/v2/advisories?advisoryIds=CVE-2016-10931")), ["RUSTSEC-2016-0001"]);

  const connect = await fetch(`${api()}/platform.vulnerabilities.v2.AdvisoriesService/ListAdvisories`, {
    method: "POST",
    headers: { ...auth(), "content-type": "application/json" },
    body: JSON.stringify({ artifactNames: ["openssl"], ecosystem: "crates.io", version: "0.10.50" }),
  });
  assert.deepEqual(ids((await connect.json()) as Body), AT_0_10_50);
});

test("the same over gRPC with buf curl", { skip: bufCurlSkip }, async () => {
  const out = await bufCurl(
    "--protocol",
    "grpc",
    "-H",
    `Authorization: Bearer ${server.ownerToken}`,
    "-d",
    '{"advisoryIds": ["CVE-2016-10931"]}',
    `${api()}/platform.vulnerabilities.v2.AdvisoriesService/ListAdvisories`,
  );
  assert.deepEqual(ids(JSON.parse(out) as Body), ["RUSTSEC-2016-0001"]);
});

test("documents and metadata need no token", async () => {
  const documents = await getJson("/advisory/v2/documents?artifactNames=openssl", {});
  const [doc] = documents.documents as Array<{ id: string; advisories: Array<{ id: string }> }>;
  assert.equal(doc.id, "openssl");
  assert.equal(doc.advisories.length, 10);
  const metadata = await getJson("/advisory/v2/metadata?ids=CVE-2016-10931", {});
  const [record] = metadata.vulnerabilityMetadata as Array<Record<string, unknown>>;
  assert.equal(record.id, "RUSTSEC-2016-0001");
  assert.equal((record.severities as Array<{ baseScore: number }>)[0].baseScore, 8.1);
  assert.equal((await fetch(`${api()}/vulnerabilities/v2/advisories`)).status, 401, "advisories need a token");
});
