import assert from "node:assert/strict";
import { test } from "node:test";
import { readdirSync } from "node:fs";
import { create, createFileRegistry, type DescField, type DescFile, type DescMessage, type DescService } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema, file_google_protobuf_empty } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient, createContextValues, createRouterTransport } from "@connectrpc/connect";
import { API_SERVICES } from "../../src/server/domains.js";
import { principalKey, grantsFrom } from "../../src/access/principal.js";
import { requirementOf } from "../../src/access/rules.js";
import { authorizationInterceptor } from "../../src/interceptors/authorization-interceptor.js";
import { inRepo } from "../support/repo.js";

/** Every service defined in our protos (gen/platform), found by reading the generated files. */
async function servicesInProtos(): Promise<string[]> {
  const root = inRepo("gen/platform");
  const files = readdirSync(root, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith("_pb.ts"));
  const names: string[] = [];
  for (const file of files) {
    // Imported as this module imports the generated code (a `.js` specifier next to it), so that a
    // compiled run reads dist/gen, which the server it tests runs.
    // eslint-disable-next-line no-restricted-syntax -- a module, resolved as the static imports are
    const module = (await import(new URL(`../../gen/platform/${file.replace(/\.ts$/, ".js")}`, import.meta.url).href)) as Record<string, unknown>;
    for (const value of Object.values(module)) {
      if ((value as DescFile | undefined)?.kind === "file") names.push(...(value as DescFile).services.map((s) => s.typeName));
    }
  }
  return [...new Set(names)].sort();
}

test("every service of our protos is served, and every RPC of them declares its authorization", async () => {
  assert.deepEqual(API_SERVICES.map((s) => s.typeName).sort(), await servicesInProtos());
  const methods = API_SERVICES.flatMap((s) => s.methods);
  for (const method of methods) {
    const requirement = requirementOf(method);
    assert.notEqual(requirement.kind, "undeclared", `${method.parent.typeName}/${method.name} declares no (platform.common.v1.auth)`);
    if (requirement.kind !== "scoped") continue;
    let desc: DescMessage | undefined = method.input;
    for (const name of requirement.field) {
      const field: DescField | undefined = desc?.fields.find((f) => f.name === name);
      assert.ok(field, `${method.name}: scope field ${requirement.field.join(".")} does not exist`);
      desc = field.fieldKind === "message" ? field.message : undefined;
    }
    assert.ok(requirement.capabilities.length > 0, `${method.name}: a scoped rule needs capabilities`);
  }
});

/** A service built at run time whose one method carries no auth option. */
function undeclaredService(): DescService {
  const file = create(FileDescriptorProtoSchema, {
    name: "test/undeclared.proto",
    package: "test.v1",
    dependency: ["google/protobuf/empty.proto"],
    syntax: "proto3",
    service: [{ name: "UndeclaredService", method: [{ name: "Do", inputType: ".google.protobuf.Empty", outputType: ".google.protobuf.Empty" }] }],
  });
  return createFileRegistry(file, (name) => (name === "google/protobuf/empty.proto" ? file_google_protobuf_empty : undefined)).getService(
    "test.v1.UndeclaredService",
  )!;
}

test("an RPC without a declaration is refused, even for a caller holding every capability", async () => {
  const service = undeclaredService();
  let called = false;
  const transport = createRouterTransport(
    (router) =>
      router.service(service, {
        do: () => {
          called = true;
          return {};
        },
      } as never),
    { router: { interceptors: [(next) => (req) => {
      req.contextValues.set(principalKey, { identityUid: "x", grants: grantsFrom([{ group_uid: "a".repeat(40), capability: "CAP_IAM_GROUPS_LIST" }]) });
      return next(req);
    }, authorizationInterceptor()] } },
  );
  const client = createClient(service, transport) as unknown as { do(req: object, opts?: object): Promise<unknown> };
  await assert.rejects(client.do({}, { contextValues: createContextValues() }), (e) => ConnectError.from(e).code === Code.Unimplemented);
  assert.equal(called, false);
});
