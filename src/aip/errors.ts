/**
 * The error vocabulary. Handlers, helpers and the store throw these; one
 * interceptor (src/interceptors/api-errors.ts) turns each into a
 * `google.rpc.Status` with exactly one ErrorInfo plus the detail named here.
 * Nothing here knows a wire format.
 */
import { Code } from "@connectrpc/connect";

/**
 * ErrorInfo.domain of every error this server returns (spec 7: a domain name of the service):
 * `--error-domain`, else the host name of the public API URL.
 */
export function errorDomainOf(config: { apiUrl: string; errorDomain?: string }): string {
  if (config.errorDomain) return config.errorDomain;
  try {
    return new URL(config.apiUrl).hostname;
  } catch {
    return config.apiUrl;
  }
}

/** A gRPC status code's name in UPPER_SNAKE (`Code.NotFound` -> `NOT_FOUND`): ErrorInfo reasons and logs use it. */
export function codeName(code: Code): string {
  return (Code[code] ?? "Unknown").replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase();
}

export interface FieldViolation {
  /** Field path as the caller wrote it (proto name, dotted). */
  field: string;
  description: string;
}

export interface PreconditionViolation {
  /** e.g. `RESOURCE_NOT_EMPTY`. */
  type: string;
  /** The resource the violation is about. */
  subject: string;
  description: string;
}

export type ErrorKind =
  | "INVALID_ARGUMENT"
  | "NOT_FOUND"
  | "ALREADY_EXISTS"
  | "FAILED_PRECONDITION"
  | "PERMISSION_DENIED"
  | "UNAUTHENTICATED"
  | "RESOURCE_EXHAUSTED"
  | "DEADLINE_EXCEEDED"
  | "UNAVAILABLE";

export class ApiError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
    /** The ErrorInfo reason; defaults to the kind. */
    readonly reason: string = kind,
    readonly fieldViolations: FieldViolation[] = [],
    readonly preconditionViolations: PreconditionViolation[] = [],
    readonly resource?: { type: string; name: string; description?: string },
    readonly metadata: Record<string, string> = {},
  ) {
    super(message);
    this.name = "ApiError";
  }
}

export function invalidArgument(violations: FieldViolation[]): ApiError {
  const text = violations.map((v) => `${v.field}: ${v.description}`).join("; ");
  return new ApiError("INVALID_ARGUMENT", `Invalid argument: ${text}`, "INVALID_ARGUMENT", violations);
}

export function invalidField(field: string, description: string): ApiError {
  return invalidArgument([{ field, description }]);
}

export function notFound(type: string, name: string): ApiError {
  return new ApiError("NOT_FOUND", `Not found: ${type} ${name}`, "NOT_FOUND", [], [], {
    type,
    name,
    description: `${type} not found`,
  });
}

export function alreadyExists(type: string, name: string, description: string): ApiError {
  return new ApiError("ALREADY_EXISTS", `Already exists: ${description}`, "ALREADY_EXISTS", [], [], {
    type,
    name,
    description,
  });
}

export function failedPrecondition(violations: PreconditionViolation[]): ApiError {
  const text = violations.map((v) => v.description).join("; ");
  return new ApiError("FAILED_PRECONDITION", `Precondition failed: ${text}`, "FAILED_PRECONDITION", [], violations);
}

export function resourceNotEmpty(type: string, uid: string): ApiError {
  return failedPrecondition([
    { type: "RESOURCE_NOT_EMPTY", subject: uid, description: `${type} ${uid} still has child resources` },
  ]);
}

export function permissionDenied(description = "the caller may not do this"): ApiError {
  return new ApiError("PERMISSION_DENIED", `Permission denied: ${description}`);
}

export function unauthenticated(description: string): ApiError {
  return new ApiError("UNAUTHENTICATED", `Unauthenticated: ${description}`);
}

export function resourceExhausted(reason: string, description: string): ApiError {
  return new ApiError("RESOURCE_EXHAUSTED", `Resource exhausted: ${description}`, reason);
}

export function deadlineExceeded(description: string): ApiError {
  return new ApiError("DEADLINE_EXCEEDED", `Deadline exceeded: ${description}`);
}

/** The store is unreachable or locked by another connection; nothing was written and a retry may succeed. */
export function unavailable(description: string): ApiError {
  return new ApiError("UNAVAILABLE", `Unavailable: ${description}`);
}
