import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import type { DescMethod } from "@bufbuild/protobuf";
import SwaggerParser from "@apidevtools/swagger-parser";
import { createConfig, lintFromString } from "@redocly/openapi-core";
import { API_SERVICES } from "../../src/server/domains.js";
import { OPENAPI_INFO } from "../../src/transport/rest/api-docs.js";
import { resolveFieldPath } from "../../src/transport/rest/field-path.js";
import { routesFromServices } from "../../src/transport/rest/http-rules.js";
import { buildOpenApi, type Schema } from "../../src/transport/rest/openapi.js";
import { pathShape } from "../../src/transport/rest/openapi-paths.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { inRepo } from "../support/repo.js";

type Operation = { operationId: string; parameters?: Array<{ name: string; in: string; description?: string }>; requestBody?: unknown; security: unknown[]; description: string };
type Document = { paths: Record<string, Record<string, Operation>> };

const COMMITTED = inRepo("gen/openapi.json");
const committedText = readFileSync(COMMITTED, "utf8");
const committed = JSON.parse(committedText) as Document;
const operations = Object.entries(committed.paths).flatMap(([path, item]) => Object.entries(item).map(([verb, op]) => ({ path, verb, op })));

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.close());

/**
 * A copy without any `description` (the protos' comments are only in the committed file), and
 * so without the `allOf` that wraps a `$ref` only to describe it.
 */
function withoutDescriptions(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutDescriptions);
  if (value && typeof value === "object") {
    const entries = Object.entries(value).filter(([k]) => k !== "description");
    if (entries.length === 1 && entries[0][0] === "allOf" && (entries[0][1] as unknown[]).length === 1) return withoutDescriptions((entries[0][1] as unknown[])[0]);
    return Object.fromEntries(entries.map(([k, v]) => [k, withoutDescriptions(v)]));
  }
  return value;
}

describe("the OpenAPI document", () => {
  test("is valid OpenAPI 3 (swagger-parser: schema and references)", async () => {
    const api = await SwaggerParser.validate(structuredClone(committed) as never);
    assert.equal((api as { openapi: string }).openapi, "3.0.3");
  });

  test("passes Redocly's recommended rules: no error, and no warning but the license the project has not declared", async () => {
    const config = await createConfig({ extends: ["recommended"] });
    const problems = await lintFromString({ source: await (await fetch(`${server.apiUrl}/openapi.json`)).text(), absoluteRef: "openapi.json", config });
    const found = problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} ${p.location[0]?.pointer ?? ""}`);
    assert.deepEqual(found.filter((p) => !p.startsWith("warn info-license")), []);
  });

  test("is served at /openapi.json as committed in gen/", async () => {
    const res = await fetch(`${server.apiUrl}/openapi.json`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "application/json");
    assert.equal(await res.text(), committedText);
  });

  test("is what the generator makes of the served descriptors (gen/ is current)", () => {
    assert.deepEqual(withoutDescriptions(JSON.parse(JSON.stringify(buildOpenApi(API_SERVICES, OPENAPI_INFO)))), withoutDescriptions(committed));
  });

  test("has no two paths that differ only in their variables' names (OpenAPI 3 forbids them)", () => {
    const byShape = new Map<string, string[]>();
    for (const path of Object.keys(committed.paths)) {
      const shape = path.replace(/\{[^}]+\}/g, "{}");
      byShape.set(shape, [...(byShape.get(shape) ?? []), path]);
    }
    assert.deepEqual([...byShape.values()].filter((paths) => paths.length > 1), []);
    assert.ok(committed.paths["/iam/v2/groups/{uid}"].post, "Create is on the path of Get, its parent named `uid` as the hosted document names it");
  });

  test("has one operation per HTTP binding the transcoder serves, and no other", () => {
    const routes = routesFromServices(API_SERVICES);
    assert.equal(operations.length, routes.length);
    for (const route of routes) {
      const path = Object.keys(committed.paths).find((p) => p.replace(/\{[^}]+\}/g, "{}") === pathShape(route.template));
      const op = path && committed.paths[path][route.httpMethod.toLowerCase()];
      assert.ok(op, `${route.httpMethod} ${route.template.source}`);
      // `<Service>_<Method>`, package-qualified where two packages have the service (PingService).
      assert.match(op.operationId, new RegExp(`^(${route.method.parent.typeName.replace(/\./g, "_")}|${route.method.parent.name})_${route.method.name}(_\\d+)?$`));
      assert.equal(op.requestBody !== undefined, route.body !== "", `${op.operationId} body`);
    }
  });

  test("names only query parameters the transcoder reads, and a path parameter for each variable of each template, in order", () => {
    const byId = new Map<string, DescMethod>(
      // The short id belongs to the first service that has it (as the generator gives it): reversed, the first is set last.
      API_SERVICES.flatMap((s) => s.methods.flatMap((m) => [[`${s.name}_${m.name}`, m] as const, [`${s.typeName.replace(/\./g, "_")}_${m.name}`, m] as const])).reverse(),
    );
    const routeOf = new Map(routesFromServices(API_SERVICES).map((r) => [`${r.httpMethod.toLowerCase()} ${pathShape(r.template)}`, r] as const));
    let queries = 0;
    for (const { path, verb, op } of operations) {
      const method = byId.get(op.operationId.replace(/_\d+$/, ""))!;
      const route = routeOf.get(`${verb} ${path.replace(/\{[^}]+\}/g, "{}")}`)!;
      const inPath = (op.parameters ?? []).filter((p) => p.in === "path").map((p) => p.name);
      assert.deepEqual(inPath, [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]), `${op.operationId}: a parameter per variable, in order`);
      assert.equal(inPath.length, route.template.variables.length, op.operationId);
      for (const parameter of op.parameters ?? []) {
        if (parameter.in === "path") continue;
        // Throws for a name that resolves to no field of the request: the transcoder would ignore it.
        resolveFieldPath(method.input, parameter.name.split("."));
        queries++;
      }
    }
    assert.ok(queries > 50, `${queries} query parameters`);
  });

  test("a path parameter named for its position says which request field it sets", () => {
    const parent = committed.paths["/iam/v2/groups/{uid}"].post.parameters?.find((p) => p.in === "path");
    assert.match(parent?.description ?? "", /parent group's uid/);
    assert.match(parent?.description ?? "", /The request's `parent`/);
  });

  test("an operation called as documented, with a UIDP sent as OpenAPI clients send it (percent-encoded), works", async () => {
    const op = committed.paths["/iam/v2/groups/{uid}"];
    assert.ok(op.post && op.get && op.patch && op.delete);
    const url = (uid: string) => `${server.apiUrl}/iam/v2/groups/{uid}`.replace("{uid}", encodeURIComponent(uid));
    const headers = { authorization: `Bearer ${server.ownerToken}`, "content-type": "application/json" };
    const made = await fetch(url(server.org.uid), { method: "POST", headers, body: JSON.stringify({ name: "documented" }) });
    assert.equal(made.status, 200);
    const uid = ((await made.json()) as { uid: string }).uid;
    const read = await fetch(url(uid), { headers });
    assert.equal(read.status, 200);
    assert.equal(((await read.json()) as { uid: string }).uid, uid);
  });

  test("says which operations need a token", () => {
    const ping = operations.find((o) => o.op.operationId === "PingService_Ping")!;
    assert.deepEqual(ping.op.security, []);
    const getGroup = operations.find((o) => o.op.operationId === "GroupsService_GetGroup")!;
    assert.deepEqual(getGroup.op.security, [{ bearerAuth: [] }]);
    assert.match(getGroup.op.description, /CAP_IAM_GROUPS_LIST/);
  });

  test("documents a call that works as documented: ListGroups with its query parameters", async () => {
    const list = committed.paths["/iam/v2/groups"].get;
    const names = (list.parameters ?? []).map((p) => p.name);
    assert.ok(names.includes("uidp.childrenOf") && names.includes("pageSize"), names.join(", "));
    const res = await fetch(`${server.apiUrl}/iam/v2/groups?uidp.inRoot=true&pageSize=1`, { headers: { authorization: `Bearer ${server.ownerToken}` } });
    assert.equal(res.status, 200);
    const body = (await res.json()) as { groups: Array<Record<string, unknown>> };
    const group = (committed as unknown as { components: { schemas: Record<string, Schema> } }).components.schemas["platform.iam.v2.Group"];
    assert.deepEqual(Object.keys(body.groups[0]).sort(), Object.keys(group.properties as object).sort());
  });
});
