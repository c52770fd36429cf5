import { BodyRefusedError } from "../http/body-reader.js";
import { RegistryError, TagImmutableError, type RegistryErrorKind } from "../../domains/registry/index.js";
import { isStorageFull, isUnavailable } from "../../store/dialect.js";
import type { NodeResponse, ResponseHeaders } from "../http/node-types.js";
import { writeJson } from "../http/status-json.js";

/**
 * Error codes of the registry's JSON error format (OCI Distribution spec), plus
 * `INVALID_ARGUMENT` for query parameters the Distribution spec has no code for and
 * `UNAVAILABLE` (503, as Docker's registry) when the store is locked or unreachable.
 */
export type OciErrorCode =
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

/** What the registry answers that is the caller's alone (a token, a page, an error) must not be cached. */
export const NO_STORE = { "cache-control": "no-store" } as const;

export interface OciError {
  status: number;
  code: OciErrorCode;
  message: string;
  detail?: unknown;
  headers?: ResponseHeaders;
}

/** Thrown by the registry host's own checks (HTTP, tokens); the host writes it as `{"errors":[{code,message,detail}]}`. */
export class RegistryFailure extends Error {
  constructor(readonly error: OciError) {
    super(error.message);
  }
}

export function fail(status: number, code: OciErrorCode, message: string, detail?: unknown, headers?: ResponseHeaders): never {
  throw new RegistryFailure({ status, code, message, detail, headers });
}

/** The HTTP status of each kind of registry domain error; its code is the kind. */
const KIND_STATUS: Record<RegistryErrorKind & OciErrorCode, number> = {
  NAME_INVALID: 400,
  NAME_UNKNOWN: 404,
  TAG_INVALID: 400,
  DIGEST_INVALID: 400,
  MANIFEST_INVALID: 400,
  MANIFEST_BLOB_UNKNOWN: 400,
  MANIFEST_UNKNOWN: 404,
  BLOB_UNKNOWN: 404,
  BLOB_UPLOAD_UNKNOWN: 404,
  BLOB_UPLOAD_INVALID: 416,
  SIZE_INVALID: 413,
  // An upstream registry's failure: a bad gateway, not this registry's own unavailability (503).
  UNAVAILABLE: 502,
  TOOMANYREQUESTS: 429,
};

/** The answer to a registry domain error, with `headers` besides the registry's own. */
export function ociErrorOf(error: RegistryError, headers?: ResponseHeaders): OciError {
  return { status: KIND_STATUS[error.kind], code: error.kind, message: error.message, detail: error.detail, headers };
}

/** How a failed request is answered, and what of it is logged (nothing for a refusal). */
export interface FailureAnswer {
  /** Undefined when there is no one to answer: the client ended its request before its body's end. */
  error?: OciError;
  /** For a refusal: the request's unread body is drained, as nothing will read it. */
  refused: boolean;
  log?: { level: "warn" | "error"; message: string; stack?: boolean };
}

/**
 * The one place where what a registry request throws becomes its answer: the host's own
 * refusals as they were thrown, the registry domain's errors by kind (`ociErrorOf`), a tag an
 * immutable pattern protects 403 DENIED, a full store
 * 507, a busy or unreachable store 503 (retry after a second), anything else 500 UNKNOWN with
 * the cause logged, never sent.
 */
export function failureAnswer(error: unknown): FailureAnswer {
  if (error instanceof RegistryFailure) return { error: error.error, refused: true };
  if (error instanceof BodyRefusedError && error.reason === "aborted") return { refused: false };
  if (error instanceof BodyRefusedError && error.reason === "wrong-length") {
    return { error: { status: 400, code: "SIZE_INVALID", message: "the body is not as long as its Content-Length says" }, refused: true };
  }
  if (error instanceof RegistryError) return { error: ociErrorOf(error), refused: true };
  if (error instanceof TagImmutableError) {
    return { error: { status: 403, code: "DENIED", message: error.description, detail: { tag: error.tag, pattern: error.pattern } }, refused: true };
  }
  if (isStorageFull(error)) {
    return {
      error: { status: 507, code: "UNAVAILABLE", message: "the registry's storage is full; nothing was written" },
      refused: false,
      log: { level: "error", message: "the registry cannot write: its storage is full" },
    };
  }
  if (isUnavailable(error)) {
    return {
      error: { status: 503, code: "UNAVAILABLE", message: "the database is busy or unreachable; retry", headers: { "retry-after": "1" } },
      refused: false,
      log: { level: "warn", message: "store unavailable" },
    };
  }
  return { error: { status: 500, code: "UNKNOWN", message: "internal error" }, refused: false, log: { level: "error", message: "registry request failed", stack: true } };
}

export function writeRegistryError(res: NodeResponse, error: OciError): void {
  const body = { errors: [{ code: error.code, message: error.message, detail: error.detail ?? null }] };
  writeJson(res, error.status, JSON.stringify(body), REGISTRY_VERSION_HEADERS, NO_STORE, error.headers);
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
