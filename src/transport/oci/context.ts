import type http from "node:http";
import type http2 from "node:http2";
import type { Kysely } from "kysely";
import type { TokenService } from "../../access/tokens.js";
import type { ServerConfig } from "../../config.js";
import type { GrantsCache } from "../../domains/iam/index.js";
import type { ContentStore, Repository, RepositoryName } from "../../domains/registry/index.js";
import type { Database } from "../../domains/kit/schema.js";
import type { RouteNote } from "../../telemetry/http-observer.js";
import type { Metrics } from "../../telemetry/metrics.js";
import { REGISTRY_VERSION_HEADERS } from "./registry-errors.js";

/** The changes the registry host's audit log records, by fixed name (docs/audit-log.md). */
export type RegistryAction =
  | "registry.manifest.put"
  | "registry.manifest.delete"
  | "registry.tag.delete"
  | "registry.blob.upload"
  | "registry.blob.mount"
  | "registry.blob.delete"
  | "registry.pull_token.use";

/** What the host learns of one request as it answers it: route and caller for its log line, and the change it makes for the audit log. */
export interface RegistryNote extends RouteNote {
  /**
   * Set by an endpoint before it authorizes a change (so a refusal is recorded too), cleared when
   * the request turns out to change nothing. Recorded once the request ends, if `actor` is known by then.
   */
  change?: { action: RegistryAction; resource: string };
}

/** What every registry endpoint is built from: the host's parts, and the note of the request it answers. */
export interface RegistryContext {
  config: ServerConfig;
  db: Kysely<Database>;
  tokens: TokenService;
  content: ContentStore;
  /** The callers' grants: the same cache the API host asks, so a revocation holds on both hosts alike. */
  grants: GrantsCache;
  /** The handle of repository `name`, bound to the store and the content (its row read once, when first needed). */
  repository(name: RepositoryName): Repository;
  /** Largest blob, bytes. */
  maxBlobBytes: number;
  /** Epoch milliseconds. */
  now: () => number;
  /** The server's metrics (the host's own when it was given none). */
  metrics: Metrics;
  note: RegistryNote;
}

/** How the audit log names a manifest or blob of `repo`: `<repo>@<digest>`, or `<repo>:<tag>` (a tag has no `:`, a digest always has one). */
export function referenceName(repo: string, reference: string): string {
  return `${repo}${reference.includes(":") ? "@" : ":"}${reference.slice(0, 256)}`;
}

/** The registry host's own listener hands it Node's requests and responses (HTTP/1.1 or the HTTP/2 compat API). */
export type RegistryRequest = http.IncomingMessage | http2.Http2ServerRequest;
export type RegistryResponse = http.ServerResponse | http2.Http2ServerResponse;

/** Writes a bodiless answer with the registry's headers. */
export function writeEmpty(res: RegistryResponse, status: number, headers: Record<string, string> = {}): void {
  if (res.destroyed) return;
  res.writeHead(status, Object.assign({ "content-length": "0" }, REGISTRY_VERSION_HEADERS, headers));
  res.end();
}

/** `304 Not Modified` with the registry's headers and `headers` (the entity's ETag and digest), no body. */
export function writeNotModified(res: RegistryResponse, headers: Record<string, string>): void {
  if (res.destroyed) return;
  res.writeHead(304, Object.assign({}, REGISTRY_VERSION_HEADERS, headers));
  res.end();
}
