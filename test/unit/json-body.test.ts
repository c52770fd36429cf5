import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { duplicateKey } from "../../src/transport/rest/json-body.js";
import { unknownJsonFields } from "../../src/transport/http/json-fields.js";
import { CreateGroupRequestSchema } from "../../gen/platform/iam/v2/groups_service_pb.js";
import { CreateIdentityProviderRequestSchema } from "../../gen/platform/iam/v2/identity_providers_service_pb.js";
import { UpdateAccountAssociationRequestSchema } from "../../gen/platform/iam/v2/account_associations_service_pb.js";

describe("duplicateKey", () => {
  const cases: Array<[string, string | undefined]> = [
    ['{"a": 1, "b": 2}', undefined],
    ['{"a": 1, "a": 2}', "a"],
    ['{"g": {"name": "x", "name": "y"}}', "g.name"],
    ['{"list": [{"k": 1}, {"k": 2}]}', undefined],
    ['{"list": [{"k": 1, "k": 2}]}', "list.k"],
    ['{"a": {"x": 1}, "b": {"x": 1}}', undefined],
    ['{"a\\u0062": 1, "ab": 2}', "ab"],
    ['{"s": "a \\"key\\": inside a string", "key": 1}', undefined],
    ['{"v": "x", "w": ["v", "v"]}', undefined],
    ["[]", undefined],
    ['"text"', undefined],
  ];
  for (const [text, want] of cases) {
    it(`${text} -> ${String(want)}`, () => assert.equal(duplicateKey(text), want));
  }
});

describe("unknownJsonFields", () => {
  const fields = (desc: Parameters<typeof unknownJsonFields>[0], json: Parameters<typeof unknownJsonFields>[1], path = "") => unknownJsonFields(desc, json, path).map((v) => v.field);

  it("names every key that is no field, at every depth, with the request's path; known fields of a wrong type are left to the decoder", () => {
    assert.deepEqual(fields(CreateGroupRequestSchema, { parent: "p", group: { name: 7, labels: { a: "b" }, nmae: "x" }, extra: true }), ["group.labels", "group.nmae", "extra"]);
    assert.deepEqual(fields(CreateGroupRequestSchema, { parent: "p", group: { name: "ok", description: "d" } }), []);
  });

  it("takes proto and JSON names, looks into lists and maps of messages, and not into well-known types", () => {
    const idp = { name: "x", oidc: { client_id: "c", clientSecret: "s", scopez: [] }, createTime: "2026-01-01T00:00:00Z" };
    assert.deepEqual(fields(CreateIdentityProviderRequestSchema.fields.find((f) => f.name === "identity_provider")!.message!, idp, "identity_provider."), ["identity_provider.oidc.scopez"]);
    const github = { accountAssociation: { github: { appInstallations: { "12": { installations: [{ installationId: "1", nmae: "a" }] } } } }, updateMask: "github" };
    assert.deepEqual(fields(UpdateAccountAssociationRequestSchema, github), ['account_association.github.app_installations["12"].installations[0].nmae']);
  });
});
