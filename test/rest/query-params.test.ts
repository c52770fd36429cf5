import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create, createFileRegistry, toJson } from "@bufbuild/protobuf";
import type { DescMessage, Message } from "@bufbuild/protobuf";
import {
  FieldDescriptorProto_Label as Label,
  FieldDescriptorProto_Type as Type,
  FileDescriptorProtoSchema,
  file_google_protobuf_field_mask,
  file_google_protobuf_timestamp,
  file_google_protobuf_wrappers,
} from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { BadRequestSchema, ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { ListGroupsRequestSchema } from "../../gen/platform/iam/v2/groups_service_pb.js";
import { applyQueryParams } from "../../src/transport/rest/query-params.js";
import type { BoundFields } from "../../src/transport/rest/query-params.js";

// A request type with every kind of field the query mapping handles (jsonName set as protoc does).
const file = createFileRegistry(
  create(FileDescriptorProtoSchema, {
    name: "rest_test.proto",
    package: "rest.test",
    syntax: "proto3",
    dependency: ["google/protobuf/timestamp.proto", "google/protobuf/field_mask.proto", "google/protobuf/wrappers.proto"],
    enumType: [{ name: "Color", value: [{ name: "COLOR_UNSPECIFIED", number: 0 }, { name: "RED", number: 1 }, { name: "GREEN", number: 2 }] }],
    messageType: [
      {
        name: "Inner",
        field: [
          { name: "children_of", jsonName: "childrenOf", number: 1, label: Label.OPTIONAL, type: Type.STRING },
          { name: "ids", jsonName: "ids", number: 2, label: Label.REPEATED, type: Type.STRING },
          { name: "deep", jsonName: "deep", number: 3, label: Label.OPTIONAL, type: Type.MESSAGE, typeName: ".rest.test.Inner" },
        ],
      },
      {
        name: "Req",
        field: [
          { name: "uidp", jsonName: "uidp", number: 1, label: Label.OPTIONAL, type: Type.MESSAGE, typeName: ".rest.test.Inner" },
          { name: "page_size", jsonName: "pageSize", number: 2, label: Label.OPTIONAL, type: Type.INT32 },
          { name: "big", jsonName: "big", number: 3, label: Label.OPTIONAL, type: Type.INT64 },
          { name: "ubig", jsonName: "ubig", number: 4, label: Label.OPTIONAL, type: Type.UINT64 },
          { name: "flag", jsonName: "flag", number: 5, label: Label.OPTIONAL, type: Type.BOOL },
          { name: "color", jsonName: "color", number: 6, label: Label.OPTIONAL, type: Type.ENUM, typeName: ".rest.test.Color" },
          { name: "colors", jsonName: "colors", number: 7, label: Label.REPEATED, type: Type.ENUM, typeName: ".rest.test.Color" },
          { name: "since", jsonName: "since", number: 8, label: Label.OPTIONAL, type: Type.MESSAGE, typeName: ".google.protobuf.Timestamp" },
          { name: "update_mask", jsonName: "updateMask", number: 9, label: Label.OPTIONAL, type: Type.MESSAGE, typeName: ".google.protobuf.FieldMask" },
          { name: "ratio", jsonName: "ratio", number: 10, label: Label.OPTIONAL, type: Type.DOUBLE },
          { name: "blob", jsonName: "blob", number: 11, label: Label.OPTIONAL, type: Type.BYTES },
          { name: "wrapped", jsonName: "wrapped", number: 12, label: Label.OPTIONAL, type: Type.MESSAGE, typeName: ".google.protobuf.Int64Value" },
          { name: "bigs", jsonName: "bigs", number: 13, label: Label.REPEATED, type: Type.INT64 },
          { name: "inners", jsonName: "inners", number: 14, label: Label.REPEATED, type: Type.MESSAGE, typeName: ".rest.test.Inner" },
          { name: "count", jsonName: "count", number: 15, label: Label.OPTIONAL, type: Type.UINT32 },
        ],
      },
    ],
  }),
  (name) =>
    ({
      "google/protobuf/timestamp.proto": file_google_protobuf_timestamp,
      "google/protobuf/field_mask.proto": file_google_protobuf_field_mask,
      "google/protobuf/wrappers.proto": file_google_protobuf_wrappers,
    })[name],
);
const Req = file.getMessage("rest.test.Req")!;
const unbound: BoundFields = { path: new Set(), body: "" };

function apply(query: string, desc: DescMessage = Req, bound: BoundFields = unbound): { json: unknown; set: string[] } {
  const message: Message = create(desc);
  const set = applyQueryParams(desc, message, new URLSearchParams(query), bound);
  return { json: toJson(desc, message), set: [...set] };
}

function violations(query: string, bound: BoundFields = unbound): { field: string; description: string }[] {
  try {
    apply(query, Req, bound);
  } catch (e) {
    assert.ok(e instanceof ConnectError);
    assert.equal(e.code, Code.InvalidArgument);
    const info = e.findDetails(ErrorInfoSchema);
    assert.deepEqual(info.map((i) => [i.reason, i.domain]), [["INVALID_ARGUMENT", ""]], "the domain is filled in when the Status is written");
    return e.findDetails(BadRequestSchema)[0].fieldViolations.map((v) => ({ field: v.field, description: v.description }));
  }
  assert.fail(`expected INVALID_ARGUMENT for ${query}`);
}

describe("query parameters into a request message", () => {
  const ok: { query: string; want: unknown }[] = [
    { query: "", want: {} },
    { query: "page_size=10", want: { pageSize: 10 } },
    { query: "pageSize=-3", want: { pageSize: -3 } },
    { query: "uidp.children_of=abc", want: { uidp: { childrenOf: "abc" } } },
    { query: "uidp.childrenOf=abc&uidp.deep.ids=z", want: { uidp: { childrenOf: "abc", deep: { ids: ["z"] } } } },
    { query: "uidp.ids=a&uidp.ids=b%2Fc", want: { uidp: { ids: ["a", "b/c"] } } },
    { query: "big=-9223372036854775808&ubig=18446744073709551615", want: { big: "-9223372036854775808", ubig: "18446744073709551615" } },
    { query: "bigs=1&bigs=2", want: { bigs: ["1", "2"] } },
    { query: "flag=true", want: { flag: true } },
    { query: "flag=1", want: { flag: true } },
    { query: "flag=0", want: {} },
    { query: "color=GREEN", want: { color: "GREEN" } },
    { query: "color=1", want: { color: "RED" } },
    { query: "colors=RED&colors=2", want: { colors: ["RED", "GREEN"] } },
    { query: "since=2024-05-01T10:20:30.123Z", want: { since: "2024-05-01T10:20:30.123Z" } },
    { query: "since=2024-05-01", want: { since: "2024-05-01T00:00:00Z" } },
    { query: "updateMask=name,description", want: { updateMask: "name,description" } },
    { query: "update_mask=display_name,uidp.childrenOf", want: { updateMask: "displayName,uidp.childrenOf" } },
    { query: "updateMask=*", want: { updateMask: "*" } },
    { query: "ratio=0.25", want: { ratio: 0.25 } },
    { query: "blob=aGk", want: { blob: "aGk=" } },
    { query: "wrapped=42", want: { wrapped: "42" } },
    { query: "count=4294967295", want: { count: 4294967295 } },
  ];
  for (const c of ok) {
    it(`accepts ${c.query || "(empty)"}`, () => assert.deepEqual(apply(c.query).json, c.want));
  }

  it("reports the proto paths it set", () => {
    assert.deepEqual(apply("uidp.childrenOf=a&updateMask=name&page_size=3").set, ["uidp.children_of", "update_mask", "page_size"]);
  });

  it("fills a generated request (ListGroupsRequest)", () => {
    const { json } = apply("page_size=5&uidp.children_of=p&uidp.ids=a&uidp.ids=b&uidp.in_root=true&order_by=name%20desc", ListGroupsRequestSchema);
    assert.deepEqual(json, { pageSize: 5, orderBy: "name desc", uidp: { childrenOf: "p", ids: ["a", "b"], inRoot: true } });
  });

  const bad: { query: string; field: string; match: RegExp; bound?: BoundFields }[] = [
    { query: "page_size.x=1", field: "page_size.x", match: /not a message/ },
    { query: "page_size=abc", field: "page_size", match: /invalid int32/ },
    { query: "page_size=", field: "page_size", match: /invalid int32/ },
    { query: "page_size=1.5", field: "page_size", match: /invalid int32/ },
    { query: "page_size=2147483648", field: "page_size", match: /invalid int32/ },
    { query: "count=-1", field: "count", match: /invalid uint32/ },
    { query: "big=9223372036854775808", field: "big", match: /invalid int64/ },
    { query: "ubig=-1", field: "ubig", match: /invalid uint64/ },
    { query: "flag=yes", field: "flag", match: /invalid bool/ },
    { query: "color=BLUE", field: "color", match: /enum rest\.test\.Color/ },
    { query: "color=7", field: "color", match: /enum/ },
    { query: "since=yesterday", field: "since", match: /invalid Timestamp/ },
    { query: "since=2024-02-30", field: "since", match: /invalid Timestamp/ },
    { query: "ratio=x", field: "ratio", match: /invalid number/ },
    { query: "uidp=x", field: "uidp", match: /dotted names/ },
    { query: "inners=x", field: "inners", match: /repeated message/ },
    { query: "page_size=1&pageSize=2", field: "pageSize", match: /more than once/ },
    { query: "uidp.children_of=a", field: "uidp.children_of", match: /URL path/, bound: { path: new Set(["uidp.children_of"]), body: "" } },
    { query: "uidp.ids=a", field: "uidp.ids", match: /request body/, bound: { path: new Set(), body: "uidp" } },
    { query: "page_size=1", field: "page_size", match: /request body/, bound: { path: new Set(), body: "*" } },
  ];
  for (const c of bad) {
    it(`refuses ${c.query}`, () => {
      const v = violations(c.query, c.bound);
      assert.equal(v.length, 1);
      assert.equal(v[0].field, c.field);
      assert.match(v[0].description, c.match);
    });
  }

  it("lists every offending parameter", () => {
    assert.deepEqual(violations("flag=x&page_size=x&count=y").map((v) => v.field), ["flag", "page_size", "count"]);
  });

  it("refuses parameters that name no field, at any depth, naming each as Google's front ends do", () => {
    assert.throws(
      () => apply("nope=1&uidp.nope=2&page_size=3"),
      (e: ConnectError) =>
        e.code === Code.InvalidArgument && e.rawMessage === 'Invalid argument: nope: Unknown name "nope": rest.test.Req has no such field; uidp.nope: Unknown name "nope": rest.test.Inner has no such field',
    );
  });
});
