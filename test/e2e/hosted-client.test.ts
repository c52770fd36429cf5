// A client written against the hosted API's REST shapes (issue: conformance) works unchanged:
// zero values present, millisecond times, unknown fields ignored, ErrorInfo.domain a host name.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { GroupsService } from "../../gen/platform/iam/v2/groups_service_pb.js";
import { serveOverWires } from "../support/over-wires.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { methodOf } from "../support/wires.js";

const MS_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

const { server, wire } = serveOverWires();

async function rest(method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const headers: Record<string, string> = { authorization: `Bearer ${server().ownerToken}` };
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(server().apiUrl + path, { method, headers, body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, json: text === "" ? {} : (JSON.parse(text) as Record<string, unknown>) };
}

describe("a hosted-API REST client", () => {
  it("reads zero values: deprecated false, empty strings, skipped 0, totalCount \"0\"", async () => {
    const repo = await rest("POST", `/registry/v2/repos/${server().org.uid}`, { name: "conformance/app" });
    assert.equal(repo.status, 200);
    assert.equal(repo.json.description, "");
    const tag = await rest("POST", `/registry/v2/tags/${repo.json.uid as string}`, { name: "latest", digest: `sha256:${"a".repeat(64)}` });
    assert.equal(tag.status, 200);
    assert.equal(tag.json.deprecated, false);
    const read = await rest("GET", `/registry/v2/tags/${tag.json.uid as string}`);
    assert.equal(read.json.deprecated, false);
    const none = await rest("GET", `/registry/v2/tags?uidp.children_of=${repo.json.uid as string}&name=nothing`);
    assert.deepEqual(none.json, { tags: [], nextPageToken: "", totalCount: "0", skipped: 0 });
  });

  it("reads every time with milliseconds and every zero value, over REST and Connect alike", async () => {
    const group = await rest("GET", `/iam/v2/groups/${server().org.uid}`);
    assert.match(String(group.json.createTime), MS_TIME);
    assert.match(String(group.json.updateTime), MS_TIME);
    const listed = await rest("GET", `/iam/v2/groups?uidp.ids=${server().org.uid}`);
    assert.match(String((listed.json.groups as Record<string, unknown>[])[0].createTime), MS_TIME);

    // The Connect protocol's JSON is the same rendering (docs/decisions.md, "One JSON rendering").
    const connect = await fetch(`${server().apiUrl}/platform.iam.v2.GroupsService/GetGroup`, {
      method: "POST",
      headers: { authorization: `Bearer ${server().ownerToken}`, "content-type": "application/json" },
      body: JSON.stringify({ uid: server().org.uid }),
    });
    assert.deepEqual(await connect.json(), group.json);
  });

  it("sends fields and parameters this server does not know: each is named, Unknown name, and nothing is done", async () => {
    const fieldsOf = (json: Record<string, unknown>) => ((json.details as Record<string, unknown>[]).find((d) => String(d["@type"]).endsWith("BadRequest"))?.fieldViolations as { field: string }[]).map((v) => v.field);
    const made = await rest("POST", `/iam/v2/groups/${server().org.uid}?requestId=abc&view=FULL`, { name: "from a newer client" });
    assert.equal(made.status, 400, JSON.stringify(made.json));
    assert.deepEqual(fieldsOf(made.json), ["requestId", "view"]);
    const body = await rest("POST", `/iam/v2/groups/${server().org.uid}`, { name: "from a newer client", labels: { team: "a" }, etag: "x" });
    assert.equal(body.status, 400, JSON.stringify(body.json));
    assert.deepEqual(fieldsOf(body.json), ["group.labels", "group.etag"]);
    const listed = await rest("GET", `/iam/v2/groups?uidp.children_of=${server().org.uid}&filter=anything&uidp.newer_field=1`);
    assert.equal(listed.status, 400);
    assert.deepEqual(fieldsOf(listed.json), ["filter", "uidp.newer_field"]);
    // A known field with a wrong type is still refused, naming it.
    const mistyped = await rest("POST", `/iam/v2/groups/${server().org.uid}`, { name: 7 });
    assert.equal(mistyped.status, 400);
    const badRequest = (mistyped.json.details as Record<string, unknown>[]).find((d) => String(d["@type"]).endsWith("BadRequest"));
    assert.deepEqual((badRequest?.fieldViolations as { field: string }[]).map((v) => v.field), ["group.name"]);
  });

  it("reads ErrorInfo.domain as the API's host name, over REST and gRPC", async () => {
    const uid = `${server().org.uid}/0123456789abcdef`;
    const missing = await rest("GET", `/iam/v2/groups/${uid}`);
    assert.equal(missing.status, 404);
    const info = (missing.json.details as Record<string, unknown>[]).find((d) => String(d["@type"]).endsWith("ErrorInfo"));
    assert.equal(info?.domain, "api.test");
    const transcoded = await rest("GET", "/iam/v2/groups?page_size=x");
    assert.equal((transcoded.json.details as Record<string, unknown>[])[0].domain, "api.test", "errors of the REST layer itself too");
    const noRoute = await rest("GET", "/nothing/v2/here");
    assert.equal((noRoute.json.details as Record<string, unknown>[])[0].domain, "api.test");
    const viaGrpc = await wire("grpc").call(methodOf(GroupsService, "GetGroup"), { uid }, { method: "GET", path: "" }, server().ownerToken);
    assert.equal(viaGrpc.code, 5);
    assert.equal(viaGrpc.details.find((d) => String(d["@type"]).endsWith("ErrorInfo"))?.domain, "api.test");
  });
});

describe("ErrorInfo.domain, configured", () => {
  let custom: TestServer;
  before(async () => {
    custom = await startTestServer({ errorDomain: "platform.example.com" });
  });
  after(() => custom.close());

  it("is the configured name on every error", async () => {
    const res = await fetch(`${custom.apiUrl}/iam/v2/groups/${custom.org.uid}/0123456789abcdef`, { headers: { authorization: `Bearer ${custom.ownerToken}` } });
    const status = (await res.json()) as { details: { domain?: string }[] };
    assert.equal(status.details[0].domain, "platform.example.com");
    const unauthenticated = await fetch(`${custom.apiUrl}/iam/v2/groups/${custom.org.uid}`);
    assert.equal(((await unauthenticated.json()) as { details: { domain?: string }[] }).details[0].domain, "platform.example.com");
  });
});
