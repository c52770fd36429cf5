import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { duplicateKey, withoutUnknownKeys } from "../../src/transport/rest/json-body.js";
import { CreateGroupRequestSchema } from "../../gen/platform/iam/v2/groups_service_pb.js";

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

describe("withoutUnknownKeys", () => {
  it("drops keys naming no field at every depth, and keeps known fields as they are (wrong types included)", () => {
    const json = { parent: "p", group: { name: 7, labels: { a: "b" } }, extra: true };
    assert.deepEqual(withoutUnknownKeys(CreateGroupRequestSchema, json), { parent: "p", group: { name: 7 } });
  });
});
