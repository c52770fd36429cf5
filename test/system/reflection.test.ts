import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { create, createFileRegistry, fromBinary, getOption } from "@bufbuild/protobuf";
import {
  FileDescriptorProtoSchema,
  FileDescriptorSetSchema,
  type FileDescriptorProto,
} from "@bufbuild/protobuf/wkt";
import type * as grpc from "@grpc/grpc-js";
import { http } from "../../gen/google/api/annotations_pb.js";
import { bidi, grpcClient } from "./grpc-clients.js";
import { startSystemServer, type SystemServer } from "./system-server.js";

interface ReflectionResponse {
  message_response: string;
  file_descriptor_response?: { file_descriptor_proto: Buffer[] };
  list_services_response?: { service: { name: string }[] };
  all_extension_numbers_response?: { base_type_name: string; extension_number: number[] };
  error_response?: { error_code: number; error_message: string };
}

let server: SystemServer;
let v1: grpc.Client;
let v1alpha: grpc.Client;

before(async () => {
  server = await startSystemServer();
  v1 = grpcClient("grpc/reflection/v1/reflection.proto", "grpc.reflection.v1.ServerReflection", server.port);
  v1alpha = grpcClient(
    "grpc/reflection/v1alpha/reflection.proto",
    "grpc.reflection.v1alpha.ServerReflection",
    server.port,
  );
});
after(async () => {
  v1.close();
  v1alpha.close();
  await server.close();
});

const ask = (client: grpc.Client, ...requests: object[]) =>
  bidi<ReflectionResponse>(client, "ServerReflectionInfo", requests);

function fileNames(res: ReflectionResponse): string[] {
  assert.equal(res.message_response, "file_descriptor_response", JSON.stringify(res.error_response));
  return res.file_descriptor_response!.file_descriptor_proto.map(
    (bytes) => fromBinary(FileDescriptorProtoSchema, bytes).name,
  );
}

/** The import closure of protos[0], each file after its imports; throws if one is missing. */
function dependenciesFirst(protos: FileDescriptorProto[]): FileDescriptorProto[] {
  const byName = new Map(protos.map((p) => [p.name, p]));
  const ordered = new Map<string, FileDescriptorProto>();
  const visit = (name: string): void => {
    const proto = byName.get(name);
    assert.ok(proto, `missing ${name}`);
    if (ordered.has(name)) return;
    proto.dependency.forEach(visit);
    ordered.set(name, proto);
  };
  visit(protos[0]!.name);
  return [...ordered.values()];
}

const expectedServices = [
  "platform.iam.v2.GroupsService",
  "platform.ping.v2.PingService",
  "grpc.reflection.v1.ServerReflection",
  "grpc.reflection.v1alpha.ServerReflection",
  "grpc.health.v1.Health",
].sort();

const groupsClosure = [
  "platform/iam/v2/groups_service.proto",
  "platform/iam/v2/group.proto",
  "platform/common/v1/authorization.proto",
  "platform/common/v1/events.proto",
  "platform/common/v1/uidp.proto",
  "google/api/annotations.proto",
  "google/api/http.proto",
  "google/api/field_behavior.proto",
  "google/protobuf/descriptor.proto",
  "google/protobuf/empty.proto",
  "google/protobuf/field_mask.proto",
  "google/protobuf/timestamp.proto",
].sort();

describe("grpc.reflection.v1", () => {
  test("list_services names the served, reflection and health services", async () => {
    const [res] = await ask(v1, { list_services: "" });
    assert.deepEqual(res!.list_services_response!.service.map((s) => s.name).sort(), expectedServices);
  });

  test("a service resolves to its file first, then its complete import closure", async () => {
    const [res] = await ask(v1, { file_containing_symbol: "platform.iam.v2.GroupsService" });
    const names = fileNames(res!);
    assert.equal(names[0], "platform/iam/v2/groups_service.proto");
    assert.deepEqual([...names].sort(), groupsClosure);

    // The first file is the answer (grpcurl relies on that); its imports must all be present.
    const protos = res!.file_descriptor_response!.file_descriptor_proto.map((b) =>
      fromBinary(FileDescriptorProtoSchema, b),
    );
    const registry = createFileRegistry(create(FileDescriptorSetSchema, { file: dependenciesFirst(protos) }));
    const service = registry.getService("platform.iam.v2.GroupsService");
    assert.ok(service);
    const getGroup = service.methods.find((m) => m.name == "GetGroup");
    assert.equal(getGroup?.output.typeName, "platform.iam.v2.Group");
    assert.equal(getGroup?.input.field.uid?.jsonName, "uid");
    // Custom options travel as unknown fields of the options message and survive the round trip.
    assert.deepEqual(getOption(getGroup!, http).pattern, { case: "get", value: "/iam/v2/groups/{uid=**}" });
  });

  test("methods, messages, fields, enums, enum values and extensions resolve to their file", async () => {
    const cases: [string, string][] = [
      ["platform.iam.v2.GroupsService.GetGroup", "platform/iam/v2/groups_service.proto"],
      ["platform.iam.v2.Group", "platform/iam/v2/group.proto"],
      ["platform.iam.v2.Group.create_time", "platform/iam/v2/group.proto"],
      ["platform.common.v1.Cap", "platform/common/v1/authorization.proto"],
      ["platform.common.v1.CAP_REPO_LIST", "platform/common/v1/authorization.proto"],
      ["platform.common.v1.AuthRule.requirement", "platform/common/v1/authorization.proto"],
      ["platform.common.v1.auth", "platform/common/v1/authorization.proto"],
      ["google.api.HttpRule", "google/api/http.proto"],
      ["google.protobuf.FieldDescriptorProto.Type", "google/protobuf/descriptor.proto"],
      [".platform.ping.v2.PingResponse", "platform/ping/v2/ping.proto"],
      ["grpc.health.v1.Health.Watch", "grpc/health/v1/health.proto"],
      ["grpc.reflection.v1.ServerReflection", "grpc/reflection/v1/reflection.proto"],
    ];
    const responses = await ask(v1, ...cases.map(([symbol]) => ({ file_containing_symbol: symbol })));
    assert.deepEqual(
      responses.map((res) => fileNames(res)[0]),
      cases.map(([, file]) => file),
    );
  });

  test("the error detail types (google.rpc.ErrorInfo, BadRequest, Status) resolve, for clients that decode error details", async () => {
    const responses = await ask(v1, { file_containing_symbol: "google.rpc.ErrorInfo" }, { file_containing_symbol: "google.rpc.BadRequest.FieldViolation" }, { file_by_filename: "google/rpc/status.proto" });
    assert.deepEqual(
      responses.map((res) => fileNames(res)[0]),
      ["google/rpc/error_details.proto", "google/rpc/error_details.proto", "google/rpc/status.proto"],
    );
    const [list] = await ask(v1, { list_services: "" });
    assert.ok(!list!.list_services_response!.service.some((s) => s.name.startsWith("google.rpc")));
  });

  test("file_by_filename, file_containing_extension and all_extension_numbers_of_type", async () => {
    const [byName, byExtension, numbers, none] = await ask(
      v1,
      { file_by_filename: "google/protobuf/descriptor.proto" },
      { file_containing_extension: { containing_type: "google.protobuf.MethodOptions", extension_number: 51001 } },
      { all_extension_numbers_of_type: "google.protobuf.MethodOptions" },
      { all_extension_numbers_of_type: "platform.iam.v2.Group" },
    );
    assert.deepEqual(fileNames(byName!), ["google/protobuf/descriptor.proto"]);
    assert.equal(fileNames(byExtension!)[0], "platform/common/v1/authorization.proto");
    assert.deepEqual(numbers!.all_extension_numbers_response, {
      base_type_name: "google.protobuf.MethodOptions",
      extension_number: [51001, 51003, 72295728],
    });
    assert.deepEqual(none!.all_extension_numbers_response?.extension_number, []);
  });

  test("unknown names get a NOT_FOUND error_response and the stream goes on", async () => {
    const responses = await ask(
      v1,
      { file_containing_symbol: "platform.iam.v2.Nope" },
      { file_by_filename: "nope.proto" },
      { file_containing_extension: { containing_type: "google.protobuf.MethodOptions", extension_number: 7 } },
      { all_extension_numbers_of_type: "platform.iam.v2.Nope" },
      { file_containing_symbol: "platform.ping.v2.PingService" },
    );
    assert.deepEqual(
      responses.slice(0, 4).map((res) => [res.message_response, res.error_response?.error_code]),
      Array(4).fill(["error_response", 5]),
    );
    assert.equal(fileNames(responses[4]!)[0], "platform/ping/v2/ping.proto");
  });
});

describe("grpc.reflection.v1alpha", () => {
  test("lists services and resolves symbols like v1", async () => {
    const [list, symbol, missing] = await ask(
      v1alpha,
      { list_services: "*" },
      { file_containing_symbol: "platform.ping.v2.PingService.Ping" },
      { file_containing_symbol: "nope.Nope" },
    );
    assert.deepEqual(list!.list_services_response!.service.map((s) => s.name).sort(), expectedServices);
    assert.deepEqual(fileNames(symbol!).sort(), [
      "google/api/annotations.proto",
      "google/api/http.proto",
      "google/protobuf/descriptor.proto",
      "platform/common/v1/authorization.proto",
      "platform/ping/v2/ping.proto",
    ]);
    assert.equal(missing!.error_response?.error_code, 5);
  });
});
