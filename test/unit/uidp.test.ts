import assert from "node:assert/strict";
import { test } from "node:test";
import * as uidp from "../../src/aip/uidp.js";

const root = "a".repeat(40);
const child = `${root}/${"b".repeat(16)}`;
const grandchild = `${child}/${"c".repeat(16)}`;

test("isUidp accepts roots and children, refuses the rest", () => {
  for (const ok of [root, child, grandchild]) assert.ok(uidp.isUidp(ok), ok);
  for (const bad of ["", "A".repeat(40), "a".repeat(39), `${root}/`, `${root}/${"b".repeat(15)}`, `${root}//${"b".repeat(16)}`, `/${root}`]) {
    assert.ok(!uidp.isUidp(bad), bad);
  }
});

test("tree navigation", () => {
  assert.equal(uidp.depth(root), 1);
  assert.equal(uidp.depth(grandchild), 3);
  assert.equal(uidp.parentOf(root), undefined);
  assert.equal(uidp.parentOf(grandchild), child);
  assert.equal(uidp.rootOf(grandchild), root);
  assert.deepEqual(uidp.ancestorsOf(grandchild), [root, child]);
  assert.deepEqual(uidp.selfAndAncestors(child), [root, child]);
  assert.equal(uidp.stripSegments(grandchild, 2), root);
  assert.equal(uidp.stripSegments(root, 1), undefined);
  assert.equal(uidp.uidLength(3), grandchild.length);
});

test("descendant tests are by segment, not by string prefix", () => {
  const sibling = `${root}/${"b".repeat(15)}d`;
  assert.ok(uidp.isDescendant(grandchild, root));
  assert.ok(!uidp.isDescendant(root, root));
  assert.ok(uidp.isSelfOrDescendant(root, root));
  assert.ok(!uidp.isDescendant(sibling, child));
  const { low, high } = uidp.descendantRange(root);
  assert.ok(child >= low && child < high);
  assert.ok(!(`${"a".repeat(39)}b` >= low && `${"a".repeat(39)}b` < high));
});

test("new uids are well formed and below their parent", () => {
  const r = uidp.newRootUid();
  const c = uidp.newChildUid(r);
  assert.ok(uidp.isUidp(r) && uidp.isRoot(r));
  assert.ok(uidp.isUidp(c) && uidp.parentOf(c) === r);
});
