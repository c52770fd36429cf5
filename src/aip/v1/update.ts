import { create } from "@bufbuild/protobuf";
import { FieldMaskSchema, type FieldMask } from "@bufbuild/protobuf/wkt";

/**
 * The field mask of a v1 Update (PUT, spec 9.3): `*`, so the v2 Update replaces every
 * updatable field and one left out of the v1 body is reset to its zero value.
 */
export function replaceAll(): FieldMask {
  return create(FieldMaskSchema, { paths: ["*"] });
}
