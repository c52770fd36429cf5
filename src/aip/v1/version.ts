import type { DescMessage, DescService } from "@bufbuild/protobuf";

/** True for a name in a domain's v1 package (`platform.<domain>.v1.*`; `platform.common.v1` is shared, not v1). */
export function isV1Name(typeName: string): boolean {
  const [root, domain, version] = typeName.split(".");
  return root === "platform" && domain !== "common" && version === "v1";
}

/** True for a service of a v1 package. */
export function isV1(service: DescService): boolean {
  return isV1Name(service.typeName);
}

/** The JSON key of a field of `message` in REST answers and OpenAPI: the proto name in v1 (as the hosted v1 gateway wrote), else the JSON name. */
export function restKeyOf(message: DescMessage, field: DescMessage["fields"][number]): string {
  return isV1Name(message.typeName) ? field.name : field.jsonName;
}
