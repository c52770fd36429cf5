import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create, createRegistry } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { ListGroupsResponseSchema } from "../../gen/platform/iam/v2/groups_service_pb.js";
import { GroupSchema } from "../../gen/platform/iam/v2/group_pb.js";
import { TagSchema } from "../../gen/platform/registry/v2/tag_pb.js";
import { messageJson, millisecondTime } from "../../src/aip/message-json.js";

const registry = createRegistry();

describe("REST response JSON", () => {
  it("writes zero values: false, 0, empty strings and lists, int64 zero as a string", () => {
    const tag = create(TagSchema, { uid: "u", name: "latest", digest: "d" });
    assert.deepEqual(messageJson(TagSchema, tag, { registry }), { uid: "u", name: "latest", digest: "d", deprecated: false });
    const empty = create(ListGroupsResponseSchema, { totalCount: 0n });
    assert.deepEqual(messageJson(ListGroupsResponseSchema, empty, { registry }), { groups: [], nextPageToken: "", totalCount: "0", skipped: 0 });
  });

  it("writes every timestamp with exactly three fraction digits, nested and repeated ones too", () => {
    const whole = timestampFromMs(Date.UTC(2026, 10, 23, 10, 0, 0));
    const group = create(GroupSchema, { uid: "g", name: "n", createTime: whole, updateTime: timestampFromMs(Date.UTC(2026, 10, 23, 10, 0, 0, 120)) });
    const json = messageJson(ListGroupsResponseSchema, create(ListGroupsResponseSchema, { groups: [group, group] }), { registry }) as { groups: Record<string, string>[] };
    for (const g of json.groups) {
      assert.equal(g.createTime, "2026-11-23T10:00:00.000Z");
      assert.equal(g.updateTime, "2026-11-23T10:00:00.120Z");
    }
  });

  it("millisecondTime pads and cuts fractions, and leaves other text alone", () => {
    assert.equal(millisecondTime("2026-11-23T10:00:00Z"), "2026-11-23T10:00:00.000Z");
    assert.equal(millisecondTime("2026-11-23T10:00:00.5Z"), "2026-11-23T10:00:00.500Z");
    assert.equal(millisecondTime("2026-11-23T10:00:00.123456789Z"), "2026-11-23T10:00:00.123Z");
    assert.equal(millisecondTime("0001-01-01T00:00:00Z"), "0001-01-01T00:00:00.000Z");
    assert.equal(millisecondTime("not a time"), "not a time");
  });
});
