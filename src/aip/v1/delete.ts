import { create } from "@bufbuild/protobuf";
import { EmptySchema, type Empty } from "@bufbuild/protobuf/wkt";
import { InUseError } from "../../store/errors.js";
import { ApiError } from "../errors.js";

/**
 * A v1 Delete over the v2 one (`remove`). A delete the v2 API refuses because something still
 * depends on the resource (FAILED_PRECONDITION with a PreconditionFailure such as
 * RESOURCE_NOT_EMPTY) fails as v1 did, ambiguously: FAILED_PRECONDITION, a message that gives
 * no reason, and no PreconditionFailure detail (spec 9.3). Every other outcome is the v2 one.
 */
export async function deleteV1(type: string, id: string, remove: () => Promise<unknown>): Promise<Empty> {
  try {
    await remove();
  } catch (error) {
    if (isBlocked(error)) throw blockedDelete(type, id);
    throw error;
  }
  return create(EmptySchema);
}

/** v1's answer to a refused delete: FAILED_PRECONDITION without saying why. */
export function blockedDelete(type: string, id: string): ApiError {
  return new ApiError("FAILED_PRECONDITION", `Precondition failed: ${type} ${id} cannot be deleted`);
}

function isBlocked(error: unknown): boolean {
  return error instanceof InUseError || (error instanceof ApiError && error.kind === "FAILED_PRECONDITION");
}
