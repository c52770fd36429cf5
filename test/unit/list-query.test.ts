import assert from "node:assert/strict";
import { test } from "node:test";
import { narrowVisibility } from "../../src/domains/kit/list-query.js";

const org = "a".repeat(40);
const f1 = `${org}/${"1".repeat(16)}`;
const f2 = `${org}/${"2".repeat(16)}`;
const f11 = `${f1}/${"3".repeat(16)}`;

test("visibility is dropped when the filter lies inside a visible subtree, and narrowed otherwise", () => {
  const cases: Array<[string[] | undefined, object, string[] | undefined]> = [
    [undefined, { childrenOf: f1 }, undefined],
    [[org], { childrenOf: f1 }, undefined],
    [[f1], { descendantsOf: f1 }, undefined],
    [[f1], { childrenOf: f11 }, undefined],
    [[f11, f2], { descendantsOf: f1 }, [f11]],
    [[f2], { childrenOf: f1 }, []],
    [[f1, f2], {}, [f1, f2]],
    [[f1], { descendantsOf: org }, [f1]],
  ];
  for (const [visible, filter, expected] of cases) {
    assert.deepEqual(narrowVisibility(visible, filter), expected, JSON.stringify({ visible, filter }));
  }
});
