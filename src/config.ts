import type { LogLevel } from "./logger.js";

/** Everything the server is configured with. Defaults are in `defaultLimits` and the CLI. */
export interface ServerConfig {
  /** Public URL of the API host: token issuer and API audience. */
  apiUrl: string;
  /** ErrorInfo.domain of every error (spec 7). Default: the host name of `apiUrl`. */
  errorDomain?: string;
  /** Public URL of the registry host: registry audience. */
  registryUrl: string;
  /** Name of the public organization: its images' `latest` and `latest-dev` tags are readable anonymously on the registry. Default "public". */
  publicOrganization?: string;
  logLevel: LogLevel;
  limits: Limits;
}

export interface Limits {
  /** Largest request body, bytes. */
  maxBodyBytes: number;
  /** Largest request header block, bytes. */
  maxHeaderBytes: number;
  /** Concurrent streams per HTTP/2 connection. */
  maxConcurrentStreams: number;
  /** Longest a unary call may run, ms. */
  requestTimeoutMs: number;
  /** Largest blob the registry accepts, bytes. */
  maxBlobBytes: number;
  /** Longest one registry request (a blob upload or download) may take, ms. */
  registryRequestTimeoutMs: number;
  /** SQLite: longest a write waits for the write lock another connection holds, ms (then UNAVAILABLE). */
  lockTimeoutMs: number;
}

export const defaultLimits: Limits = {
  maxBodyBytes: 4 * 1024 * 1024,
  maxHeaderBytes: 16 * 1024,
  maxConcurrentStreams: 256,
  requestTimeoutMs: 30_000,
  maxBlobBytes: 10 * 1024 ** 3,
  registryRequestTimeoutMs: 3600_000,
  lockTimeoutMs: 5_000,
};
