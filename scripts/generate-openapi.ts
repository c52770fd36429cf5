// Writes gen/openapi.json: the OpenAPI document of the served REST routes, with the protos'
// comments as descriptions. Run by `npm run generate` after `buf generate` (so buf is on PATH
// and proto-deps/ exists): `buf build` gives the descriptors with their source comments.
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { fromBinary, createFileRegistry, type DescEnum, type DescField, type DescMessage, type DescMethod, type DescService } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { API_SERVICES } from "../src/server/domains.js";
import { OPENAPI_FILE, OPENAPI_INFO } from "../src/transport/rest/api-docs.js";
import { buildOpenApi } from "../src/transport/rest/openapi.js";

const image = execFileSync("buf", ["build", "-o", "-"], { maxBuffer: 64 * 1024 * 1024 });
const registry = createFileRegistry(fromBinary(FileDescriptorSetSchema, image));
const services = API_SERVICES.map((served) => {
  const withComments = registry.getService(served.typeName);
  if (!withComments) throw new Error(`buf build has no ${served.typeName}`);
  return withComments as DescService;
});
const document = buildOpenApi(services, {
  ...OPENAPI_INFO,
  describe: (desc) => leadingComment(desc),
});
writeFileSync(OPENAPI_FILE, `${JSON.stringify(document, null, 2)}\n`);

/** The path of a declaration in its file's SourceCodeInfo (descriptor.proto field numbers). */
function sourcePath(desc: DescMethod | DescMessage | DescField | DescEnum): number[] {
  switch (desc.kind) {
    case "rpc":
      return [6, desc.parent.file.proto.service.indexOf(desc.parent.proto), 2, desc.parent.proto.method.indexOf(desc.proto)];
    case "message":
      return desc.parent ? [...sourcePath(desc.parent), 3, desc.parent.proto.nestedType.indexOf(desc.proto)] : [4, desc.file.proto.messageType.indexOf(desc.proto)];
    case "enum":
      return desc.parent ? [...sourcePath(desc.parent), 4, desc.parent.proto.enumType.indexOf(desc.proto)] : [5, desc.file.proto.enumType.indexOf(desc.proto)];
    case "field":
      return [...sourcePath(desc.parent), 2, desc.parent.proto.field.indexOf(desc.proto)];
  }
}

/** The comment above a declaration in the .proto source, one leading space per line removed. */
function leadingComment(desc: DescMethod | DescMessage | DescField | DescEnum): string | undefined {
  const file = desc.kind === "rpc" ? desc.parent.file : desc.kind === "field" ? desc.parent.file : desc.file;
  const path = sourcePath(desc).join(",");
  const location = file.proto.sourceCodeInfo?.location.find((l) => l.path.join(",") === path);
  return location?.leadingComments.replace(/^ /gm, "").trim() || undefined;
}
