import type { NodeResponse, ResponseHeaders } from "../http/node-types.js";
import { writeJson } from "../http/status-json.js";

/**
 * Error codes of the registry's JSON error format (OCI Distribution spec), plus
 * `INVALID_ARGUMENT` for query parameters the Distribution spec has no code for and
 * `UNAVAILABLE` (503, as Docker's registry) when the store is locked or unreachable.
 */
export type RegistryErrorCode =
  | "BLOB_UNKNOWN"
  | "BLOB_UPLOAD_INVALID"
  | "BLOB_UPLOAD_UNKNOWN"
  | "DIGEST_INVALID"
  | "MANIFEST_BLOB_UNKNOWN"
  | "MANIFEST_INVALID"
  | "MANIFEST_UNKNOWN"
  | "NAME_INVALID"
  | "NAME_UNKNOWN"
  | "SIZE_INVALID"
  | "UNAUTHORIZED"
  | "DENIED"
  | "UNSUPPORTED"
  | "TOOMANYREQUESTS"
  | "TAG_INVALID"
  | "INVALID_ARGUMENT"
  | "UNAVAILABLE"
  | "UNKNOWN";

/** Every registry answer carries the API version header (Distribution spec). */
export const REGISTRY_VERSION_HEADERS = { "docker-distribution-api-version": "registry/2.0" } as const;

export interface RegistryError {
  status: number;
  code: RegistryErrorCode;
  message: string;
  detail?: unknown;
  headers?: ResponseHeaders;
}

/** Thrown by the registry handlers; the host writes it as `{"errors":[{code,message,detail}]}`. */
export class RegistryFailure extends Error {
  constructor(readonly error: RegistryError) {
    super(error.message);
  }
}

export function fail(status: number, code: RegistryErrorCode, message: string, detail?: unknown, headers?: ResponseHeaders): never {
  throw new RegistryFailure({ status, code, message, detail, headers });
}

export function writeRegistryError(res: NodeResponse, error: RegistryError): void {
  const body = { errors: [{ code: error.code, message: error.message, detail: error.detail ?? null }] };
  writeJson(res, error.status, JSON.stringify(body), { ...REGISTRY_VERSION_HEADERS, "cache-control": "no-store", ...error.headers });
}

/** Quotes a challenge parameter value (RFC 9110 quoted-string). */
function quoted(value: string): string {
  return `"${value.replace(/["\\]/g, (c) => `\\${c}`)}"`;
}

/**
 * The `WWW-Authenticate` challenge that sends a client to the token endpoint:
 * `Bearer realm="<registryUrl>/token",service="<registry host>",scope="repository:<name>:pull"`.
 */
export function bearerChallenge(registryUrl: string, options: { scope?: string; error?: "invalid_token" | "insufficient_scope" } = {}): string {
  const url = new URL(registryUrl);
  const realm = `${registryUrl.replace(/\/+$/, "")}/token`;
  const parts = [`realm=${quoted(realm)}`, `service=${quoted(url.host)}`];
  if (options.scope !== undefined) parts.push(`scope=${quoted(options.scope)}`);
  if (options.error !== undefined) parts.push(`error=${quoted(options.error)}`);
  return `Bearer ${parts.join(",")}`;
}
