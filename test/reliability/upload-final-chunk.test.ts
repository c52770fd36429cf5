import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, test } from "node:test";
import { registryClient, sha256, type RegistryClient } from "../support/registry-push.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

/**
 * The closing `PUT ...?digest=` of a chunked upload may carry the last chunk with its
 * `Content-Range`. The distribution spec: "If the final chunk is uploaded out of order, the
 * registry MUST respond with a 416". Nothing of a refused chunk is kept: the upload still ends
 * where it did, and a client that resumes from its status builds on the right bytes.
 */

let server: TestServer;
let client: RegistryClient;

before(async () => {
  server = await startTestServer({ logLevel: "silent", registryUrl: "http://registry.test" });
  const platform = await server.server.tokens.issue({ subject: server.ownerUid, audience: "http://registry.test" });
  const answer = await fetch(`${server.registryUrl}/token?scope=${encodeURIComponent("repository:acme/chunks:pull,push")}`, { headers: { authorization: `Bearer ${platform.token}` } });
  assert.equal(answer.status, 200);
  client = registryClient([server.registryUrl], ((await answer.json()) as { token: string }).token);
});

after(() => server.close());

async function startedWith(first: Buffer): Promise<string> {
  const start = await client.request("POST", "/v2/acme/chunks/blobs/uploads/");
  assert.equal(start.status, 202);
  const patch = await client.request("PATCH", start.headers.get("location")!, { body: first, headers: { "content-range": `0-${first.length - 1}` } });
  assert.equal(patch.status, 202, patch.bytes.toString());
  return patch.headers.get("location")!;
}

const code = (answer: { bytes: Buffer }) => (JSON.parse(answer.bytes.toString()) as { errors: { code: string }[] }).errors[0].code;

test("a final chunk out of order is 416, and the upload keeps none of it", async () => {
  const blob = randomBytes(3067);
  const location = await startedWith(blob.subarray(0, 1024));
  // The issue's case: bytes 2048-3066 sent as the final chunk of an upload that holds 0-1023.
  const put = await client.request("PUT", `${location}?digest=${sha256(blob)}`, { body: blob.subarray(2048), headers: { "content-range": "2048-3066" } });
  assert.equal(put.status, 416, put.bytes.toString());
  assert.equal(code(put), "BLOB_UPLOAD_INVALID");
  assert.equal(put.headers.get("range"), "0-1023");
  assert.equal(put.headers.get("location"), location);
  const status = await client.request("GET", location);
  assert.equal(status.status, 204);
  assert.equal(status.headers.get("range"), "0-1023");

  // A final chunk whose range overlaps what was received, ends before it starts, or disagrees with its length: 416 too.
  for (const [range, body] of [
    ["1000-3066", blob.subarray(1000)],
    ["1024-1000", blob.subarray(1024)],
    ["1024-2000", blob.subarray(1024)],
  ] as const) {
    const refused = await client.request("PUT", `${location}?digest=${sha256(blob)}`, { body, headers: { "content-range": range } });
    assert.equal(refused.status, 416, range);
    assert.equal(refused.headers.get("range"), "0-1023", range);
  }

  // Resuming where the status says, the client completes the blob with the right bytes.
  const done = await client.request("PUT", `${location}?digest=${sha256(blob)}`, { body: blob.subarray(1024), headers: { "content-range": `1024-${blob.length - 1}` } });
  assert.equal(done.status, 201, done.bytes.toString());
  const pulled = await client.request("GET", `/v2/acme/chunks/blobs/${sha256(blob)}`);
  assert.deepEqual(pulled.bytes, blob);
});

test("a final chunk without Content-Range is appended as before", async () => {
  const blob = randomBytes(2000);
  const location = await startedWith(blob.subarray(0, 500));
  const done = await client.request("PUT", `${location}?digest=${sha256(blob)}`, { body: blob.subarray(500) });
  assert.equal(done.status, 201, done.bytes.toString());
  assert.deepEqual((await client.request("GET", `/v2/acme/chunks/blobs/${sha256(blob)}`)).bytes, blob);
});
