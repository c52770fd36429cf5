import type { AddressInfo } from "node:net";
import { bootstrapOrganization } from "../../src/bootstrap.js";
import { defaultLimits, type Limits } from "../../src/config.js";
import { createLogger, type LogLevel } from "../../src/logger.js";
import { createServer, type PlatformServer } from "../../src/server.js";
import { openStore, type Store } from "../../src/store/store.js";

export interface TestServer {
  apiPort: number;
  registryPort: number;
  apiUrl: string;
  registryUrl: string;
  store: Store;
  server: PlatformServer;
  /** The bootstrap organization and a token of its owner. */
  org: { uid: string; name: string };
  ownerUid: string;
  ownerToken: string;
  /** Lines logged by the server. */
  logs: string[];
  close(): Promise<void>;
}

/**
 * A real server on ephemeral loopback ports over `dbUrl` (default in-memory
 * SQLite), with one bootstrapped organization.
 */
export async function startTestServer(options: { dbUrl?: string; limits?: Partial<Limits>; logLevel?: LogLevel } = {}): Promise<TestServer> {
  const store = await openStore(options.dbUrl ?? ":memory:");
  const logs: string[] = [];
  const logger = createLogger(options.logLevel ?? "info", (line) => logs.push(line));
  // The URLs are the token issuer and audience, so they must be known before listening: take free ports first.
  const server = await createServer(
    store,
    { apiUrl: "http://api.test", registryUrl: "http://registry.test", logLevel: "info", limits: { ...defaultLimits, ...options.limits } },
    logger,
  );
  const listen = (s: PlatformServer["api"]["server"]) =>
    new Promise<number>((resolve) => s.listen(0, "127.0.0.1", () => resolve((s.address() as AddressInfo).port)));
  const apiPort = await listen(server.api.server);
  const registryPort = await listen(server.registry.server);
  const { organization, identity } = await bootstrapOrganization(store, "acme", Date.now());
  const { token } = await server.tokens.issue({ subject: identity.uid, audience: "http://api.test" });
  return {
    apiPort,
    registryPort,
    apiUrl: `http://127.0.0.1:${apiPort}`,
    registryUrl: `http://127.0.0.1:${registryPort}`,
    store,
    server,
    org: { uid: organization.uid, name: organization.name },
    ownerUid: identity.uid,
    ownerToken: token,
    logs,
    async close() {
      await server.close();
      await store.close();
    },
  };
}
