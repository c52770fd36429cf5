import type http from "node:http";
import type http2 from "node:http2";
import type { Kysely } from "kysely";
import type { TokenService } from "../../auth/tokens.js";
import type { ServerConfig } from "../../config.js";
import type { ContentStore } from "../../domains/registry/index.js";
import type { Database } from "../../domains/schema.js";
import { REGISTRY_VERSION_HEADERS } from "./registry-errors.js";

/** What every registry endpoint is built from. */
export interface RegistryContext {
  config: ServerConfig;
  db: Kysely<Database>;
  tokens: TokenService;
  content: ContentStore;
  /** Largest blob, bytes. */
  maxBlobBytes: number;
  /** Epoch milliseconds. */
  now: () => number;
}

/** The registry host's own listener hands it Node's requests and responses (HTTP/1.1 or the HTTP/2 compat API). */
export type RegistryRequest = http.IncomingMessage | http2.Http2ServerRequest;
export type RegistryResponse = http.ServerResponse | http2.Http2ServerResponse;

/** Writes a bodiless answer with the registry's headers. */
export function writeEmpty(res: RegistryResponse, status: number, headers: Record<string, string> = {}): void {
  if (res.destroyed) return;
  res.writeHead(status, { ...REGISTRY_VERSION_HEADERS, "content-length": "0", ...headers });
  res.end();
}

/** `304 Not Modified` with the registry's headers and `headers` (the entity's ETag and digest), no body. */
export function writeNotModified(res: RegistryResponse, headers: Record<string, string>): void {
  if (res.destroyed) return;
  res.writeHead(304, { ...REGISTRY_VERSION_HEADERS, ...headers });
  res.end();
}
