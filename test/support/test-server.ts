import { mkdtempSync, rmSync } from "node:fs";
import { createServer as createNetServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bootstrapOrganization } from "../../src/server/bootstrap.js";
import { defaultLimits, type AdvisoryFeedsConfig, type EventsConfig, type Limits, type OrganizationCreation, type UpstreamIssuerPolicy, type LoginConfig, type RetentionConfig, type UpstreamRegistriesConfig } from "../../src/config.js";
import { createFileContentStore, type ContentStore } from "../../src/domains/registry/content/content-store.js";
import { createLogger, type LogLevel } from "../../src/logger.js";
import { createServer, type PlatformServer } from "../../src/server/server.js";
import type { AnonymousRefusalLimits } from "../../src/telemetry/anonymous-refusals.js";
import { openAuditLog } from "../../src/telemetry/audit-log.js";
import { openStore, type Store } from "../../src/server/open-store.js";
import type { TlsCredentials } from "../../src/transport/tls-credentials.js";

export interface TestServer {
  apiPort: number;
  registryPort: number;
  /** The metrics listener's port (`GET /metrics`). */
  metricsPort: number;
  apiUrl: string;
  registryUrl: string;
  store: Store;
  content: ContentStore;
  /** The folder of `content` (blobs and uploads). */
  contentDir: string;
  server: PlatformServer;
  /** The bootstrap organization and a token of its owner. */
  org: { uid: string; name: string };
  ownerUid: string;
  ownerToken: string;
  /** Lines logged by the server. */
  logs: string[];
  close(): Promise<void>;
}

/** What `startTestServer` configures; a field left out takes the server's default. */
export interface TestServerOptions {
  dbUrl?: string;
  limits?: Partial<Limits>;
  logLevel?: LogLevel;
  registryUrl?: string;
  registryPort?: number;
  errorDomain?: string;
  /** Default: the server's default ("bootstrap": no organization is created over the API). */
  organizationCreation?: OrganizationCreation;
  /** Default: the server's default (https issuers on public addresses only). */
  upstreamIssuers?: UpstreamIssuerPolicy;
  /** Default: the server's default (https sinks on public addresses only). */
  events?: Partial<EventsConfig>;
  /** Default: none (no cross-origin call allowed). */
  corsOrigins?: string[];
  /** Default: no advisory feed. */
  advisoryFeeds?: Partial<AdvisoryFeedsConfig>;
  /** Retention passes; default: none but those a test drains (`workers.get("retention").drain()`). */
  retention?: Partial<RetentionConfig>;
  /** People signing in; default: no server-wide provider. */
  login?: Partial<LoginConfig>;
  /** The API's public URL (token issuer and audience). Default http://api.test; "listen" for the URL it listens on (a browser or the CLI must reach it). */
  apiUrl?: string;
  /** A file the audit log is appended to (as `serve --audit-log`); default none. */
  auditLog?: string;
  /** Both hosts speak TLS with these (as `serve --tls-cert --tls-key`); default cleartext. */
  tls?: TlsCredentials;
  /** Which upstream registries pull-through may fetch from; default the server's (https on public addresses). */
  upstreamRegistries?: Partial<UpstreamRegistriesConfig>;
  /** How many refused anonymous calls the audit log writes; default the server's. */
  auditAnonymousRefusals?: Partial<AnonymousRefusalLimits>;
}

/**
 * A real server on ephemeral loopback ports over `dbUrl` (default in-memory
 * SQLite), with one bootstrapped organization.
 */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const limits = { ...defaultLimits, ...options.limits };
  const store = await openStore(options.dbUrl ?? ":memory:", { lockTimeoutMs: limits.lockTimeoutMs });
  const logs: string[] = [];
  const logger = createLogger(options.logLevel ?? "info", (line) => logs.push(line));
  // The URLs are the token issuer and audience, so they must be known before listening: take free ports first.
  const listenPort = options.apiUrl === "listen" ? await freePort() : 0;
  const apiUrl = options.apiUrl === "listen" ? `http://127.0.0.1:${listenPort}` : (options.apiUrl ?? "http://api.test");
  const contentDir = mkdtempSync(join(tmpdir(), "platform-api-content-"));
  const content = createFileContentStore(contentDir);
  const audit = options.auditLog === undefined ? undefined : openAuditLog(options.auditLog, { anonymousRefusals: options.auditAnonymousRefusals });
  const server = await createServer(
    store,
    {
      apiUrl,
      registryUrl: options.registryUrl ?? "http://registry.test",
      errorDomain: options.errorDomain,
      organizationCreation: options.organizationCreation,
      upstreamIssuers: options.upstreamIssuers,
      events: options.events,
      corsOrigins: options.corsOrigins,
      advisoryFeeds: options.advisoryFeeds,
      retention: { intervalMs: 0, ...options.retention },
      login: options.login,
      upstreamRegistries: options.upstreamRegistries,
      logLevel: "info",
      limits,
      tls: options.tls,
    },
    logger,
    content,
    audit,
  );
  const listen = (s: PlatformServer["api"]["server"], port = 0) =>
    new Promise<number>((resolve) => s.listen(port, "127.0.0.1", () => resolve((s.address() as AddressInfo).port)));
  const apiPort = await listen(server.api.server, listenPort);
  const registryPort = await listen(server.registry.server, options.registryPort);
  const metricsPort = await listen(server.metrics.server);
  server.startWork();
  const { organization, identity } = await bootstrapOrganization(store, "acme", Date.now());
  const { token } = await server.tokens.issue({ subject: identity.uid, audience: apiUrl });
  return {
    apiPort,
    registryPort,
    metricsPort,
    apiUrl: `http://127.0.0.1:${apiPort}`,
    registryUrl: `http://127.0.0.1:${registryPort}`,
    store,
    content,
    contentDir,
    server,
    org: { uid: organization.uid, name: organization.name },
    ownerUid: identity.uid,
    ownerToken: token,
    logs,
    async close() {
      await server.close();
      await store.close();
      audit?.close();
      rmSync(contentDir, { recursive: true, force: true });
    },
  };
}

/** A port free now on loopback (for a server whose URL must be known before it listens). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createNetServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}
