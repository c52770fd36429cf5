import type { DescService } from "@bufbuild/protobuf";

/** True for a service of a v1 package (`platform.<domain>.v1`). */
export function isV1(service: DescService): boolean {
  return service.typeName.split(".")[2] === "v1";
}
