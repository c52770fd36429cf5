import { RegistryError } from "../errors.js";
import { UpstreamFailure } from "./upstream-client.js";

/**
 * The registry's refusal of a pull through upstream `url` that failed and of which nothing is held:
 * TOOMANYREQUESTS when the upstream said so (429), SIZE_INVALID for a blob over the server's limit,
 * UNAVAILABLE otherwise; each names the upstream and its failure. Any other error is rethrown as it is.
 */
export function upstreamError(url: string, error: unknown): RegistryError {
  if (!(error instanceof UpstreamFailure)) throw error;
  const detail = { upstream: url, ...(error.status === undefined ? {} : { status: error.status }) };
  if (error.status === 429) return new RegistryError("TOOMANYREQUESTS", `the upstream ${url} refused: too many requests (${error.message})`, detail);
  if (error.status === 413) return new RegistryError("SIZE_INVALID", error.message, detail);
  return new RegistryError("UNAVAILABLE", `the upstream ${url} failed: ${error.message}`, detail);
}

/** Whether an error of a repository's operation says it does not hold the thing asked for. */
export function isUnknown(error: unknown): boolean {
  return error instanceof RegistryError && (error.kind === "NAME_UNKNOWN" || error.kind === "MANIFEST_UNKNOWN" || error.kind === "BLOB_UNKNOWN");
}
