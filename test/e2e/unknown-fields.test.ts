import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { fromBinary } from "@bufbuild/protobuf";
import { BadRequestSchema, ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { testDatabases } from "../support/databases.js";
import { serveOverWires } from "../support/over-wires.js";

/**
 * A misspelled field or parameter is an error, never silence (AIP-193, as Google's REST front ends
 * answer `Unknown name "x"`): over REST a body key or a query parameter that names no field is 400
 * INVALID_ARGUMENT with a BadRequest naming each; over Connect's JSON (POST and GET) the first such
 * key is named. On SQLite and PostgreSQL.
 */

interface Status {
  code: number;
  message: string;
  details: Array<{ "@type": string; reason?: string; domain?: string; fieldViolations?: Array<{ field: string; description: string }> }>;
}

const violations = (status: Status) => status.details.find((d) => d["@type"].endsWith("google.rpc.BadRequest"))?.fieldViolations?.map((v) => v.field) ?? [];

for (const database of await testDatabases()) {
  describe(`unknown fields and parameters (${database.name})`, { skip: database.skip }, () => {
    const served = serveOverWires({ database, logLevel: "silent" });
    const api = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
      const server = served.server();
      const res = await fetch(`${server.apiUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${server.ownerToken}`, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, json: (await res.json()) as Status & Record<string, unknown> };
    };
    const assertRefused = (out: { status: number; json: Status }, fields: string[]) => {
      assert.equal(out.status, 400, JSON.stringify(out.json));
      assert.equal(out.json.code, 3);
      assert.deepEqual(violations(out.json), fields);
      for (const field of fields) assert.match(out.json.message, new RegExp(`Unknown name "${field.split(".").pop()}"`));
      const info = out.json.details.find((d) => d["@type"].endsWith("google.rpc.ErrorInfo"));
      assert.equal(info?.reason, "INVALID_ARGUMENT");
      assert.ok(info?.domain, "the ErrorInfo names the server's domain");
    };

    test("REST: a misspelled query parameter of a List (the issue's ?artifactName=) is refused, not answered with everything", async () => {
      assertRefused(await api("GET", "/advisory/v2/documents?artifactName=openssl"), ["artifactName"]);
      assertRefused(await api("GET", "/iam/v2/groups?uidp.childrenOff=x&pageSize=5&colour=red"), ["uidp.childrenOff", "colour"]);
      const good = await api("GET", "/advisory/v2/documents?artifactNames=openssl");
      assert.equal(good.status, 200, JSON.stringify(good.json));
    });

    test("REST: every misspelled body key is named, at any depth; nothing is written", async () => {
      const org = served.server().org.uid;
      const before = await api("GET", `/iam/v2/groups?uidp.childrenOf=${org}`);
      const out = await api("POST", `/iam/v2/identityProviders/${org}`, { name: "sso", descripton: "typo", oidc: { issuer: "https://sso.example", clientId: "c", clientSecret: "s", groupClaim: "groups" } });
      assertRefused(out, ["identity_provider.descripton", "identity_provider.oidc.groupClaim"]);
      const group = await api("POST", `/iam/v2/groups/${org}`, { name: "typo", descripton: "x" });
      assertRefused(group, ["group.descripton"]);
      const after = await api("GET", `/iam/v2/groups?uidp.childrenOf=${org}`);
      assert.deepEqual(after.json, before.json, "nothing was created");
    });

    test("REST: a PATCH with a misspelled key is refused, not a silent no-op", async () => {
      const org = served.server().org.uid;
      const made = await api("POST", `/iam/v2/groups/${org}`, { name: "patched" });
      assert.equal(made.status, 200);
      const uid = made.json.uid as string;
      assertRefused(await api("PATCH", `/iam/v2/groups/${uid}`, { descriptoin: "new" }), ["group.descriptoin"]);
      assert.equal((await api("GET", `/iam/v2/groups/${uid}`)).json.updateTime, made.json.updateTime);
    });

    test("Connect JSON: a misspelled key is refused with a BadRequest naming it, POST and GET", async () => {
      const org = served.server().org.uid;
      const assertConnectRefused = (out: { status: number; json: Record<string, unknown> }, field: string, type: string) => {
        assert.equal(out.status, 400, JSON.stringify(out.json));
        assert.equal(out.json.code, "invalid_argument");
        assert.equal(out.json.message, `Invalid argument: ${field}: Unknown name "${field}": ${type} has no such field`);
        const details = out.json.details as Array<{ type: string; value: string }>;
        const bad = details.find((d) => d.type === "google.rpc.BadRequest");
        assert.ok(bad, JSON.stringify(details));
        assert.deepEqual(fromBinary(BadRequestSchema, Buffer.from(bad.value, "base64")).fieldViolations.map((v) => v.field), [field]);
        const info = details.find((d) => d.type === "google.rpc.ErrorInfo");
        assert.ok(info && fromBinary(ErrorInfoSchema, Buffer.from(info.value, "base64")).domain, "the ErrorInfo names the server's domain");
      };
      const post = await api("POST", "/platform.iam.v2.GroupsService/CreateGroup", { parent: org, group: { name: "connect typo", descripton: "x" } });
      assertConnectRefused(post, "descripton", "platform.iam.v2.Group");
      const message = encodeURIComponent(JSON.stringify({ uid: org, colour: "red" }));
      const get = await api("GET", `/platform.iam.v2.GroupsService/GetGroup?connect=v1&encoding=json&message=${message}`);
      assertConnectRefused(get, "colour", "platform.iam.v2.GetGroupRequest");
    });
  });
}
