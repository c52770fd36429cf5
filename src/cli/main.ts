import { ORGANIZATION_CREATION_VALUES, type LoginConfig, type OrganizationCreation } from "../config.js";
import { isLogLevel, LOG_LEVELS, type Logger } from "../logger.js";
import type { AuditLog } from "../telemetry/audit-log.js";
import { countOf, limitOptions, limitsOf, poolSizeOption, scanConfigFrom, scanOptions } from "./limits.js";
import { CommandError, flag, parse, parseDuration, storeOptions, usage, UsageError, type OptionSpec } from "../command/options.js";
import type { Command } from "../command/command.js";
import { advisoryFeedOptions, advisoryFeedsOf, blobRedirectOf, blobRedirectOptions, contentStoreOf, contentStoreOptions, DOMAIN_COMMANDS, type CommandContext } from "../server/commands.js";
import { CLIENT_COMMANDS } from "./client/commands.js";

// Each command imports what it runs with once its options are read (dynamic imports below):
// help and usage errors answer without loading the server.

const serveOptions: Record<string, OptionSpec> = {
  port: { type: "string", env: "PORT", default: "8080", help: "API port (gRPC, gRPC-Web, Connect, REST); 0 picks a free one" },
  "registry-port": { type: "string", env: "REGISTRY_PORT", default: "5000", help: "registry port; 0 picks a free one" },
  host: { type: "string", env: "HOST", default: "0.0.0.0", help: "address to listen on" },
  db: storeOptions.db,
  ...contentStoreOptions,
  ...blobRedirectOptions,
  "api-url": { type: "string", env: "API_URL", help: "public URL of the API host (token issuer); default http://localhost:<port> (https with --tls-cert)" },
  "registry-url": { type: "string", env: "REGISTRY_URL", help: "public URL of the registry host; default http://localhost:<registry-port> (https with --tls-cert)" },
  "tls-cert": { type: "string", env: "TLS_CERT", help: "PEM certificate chain: both hosts speak TLS (HTTP/2 by ALPN, and HTTP/1.1); reread on SIGHUP" },
  "tls-key": { type: "string", env: "TLS_KEY", help: "PEM private key of --tls-cert; reread on SIGHUP" },
  "error-domain": { type: "string", env: "ERROR_DOMAIN", help: "ErrorInfo.domain of every error; default the host name of --api-url" },
  "public-org": { type: "string", env: "PUBLIC_ORG", default: "public", help: "organization whose images' latest and latest-dev tags are readable anonymously" },
  "org-creation": {
    type: "string",
    env: "ORG_CREATION",
    default: "bootstrap",
    help: "who may create organizations over the API: bootstrap (nobody; use the bootstrap command) or anyone (any verified caller)",
  },
  "events-allow-local-sinks": { type: "boolean", env: "EVENTS_ALLOW_LOCAL_SINKS", help: "let subscriptions name http:// sinks and loopback or private addresses (default: https on public addresses only)" },
  "events-concurrency": {
    type: "string",
    env: "EVENTS_CONCURRENCY",
    default: "16",
    help: "event deliveries this process makes at once (one per subscription; one organization's subscriptions get at most half)",
  },
  "events-retention": {
    type: "string",
    env: "EVENTS_RETENTION",
    default: "7d",
    help: "how long delivered events, and failed deliveries once given up, are kept before they are pruned (90s, 15m, 1h, 7d)",
  },
  "events-retry-period": {
    type: "string",
    env: "EVENTS_RETRY_PERIOD",
    default: "24h",
    help: "how long a delivery the sink does not accept is retried, from its first failure, before it is marked failed",
  },
  "allow-http-issuers": { type: "boolean", env: "ALLOW_HTTP_ISSUERS", help: "let identities name plain http issuers, and the token exchange fetch their keys (default: https only)" },
  "allow-private-issuers": {
    type: "boolean",
    env: "ALLOW_PRIVATE_ISSUERS",
    help: "let the token exchange fetch keys from hosts on loopback, private or link-local addresses (default: public addresses only)",
  },
  "allow-http-upstreams": { type: "boolean", env: "ALLOW_HTTP_UPSTREAMS", help: "let upstream registries (pull-through) be plain http URLs (default: https only)" },
  "allow-private-upstreams": {
    type: "boolean",
    env: "ALLOW_PRIVATE_UPSTREAMS",
    help: "let upstream registries (pull-through) be on loopback, private or link-local addresses (default: public addresses only)",
  },
  "upstream-timeout": {
    type: "string",
    env: "UPSTREAM_TIMEOUT",
    default: "10s",
    help: "how long an upstream registry may take to answer, and at most between two bytes of a blob; then what is held is served",
  },
  "login-issuer": { type: "string", env: "LOGIN_ISSUER", help: "OIDC issuer people sign in with (server-wide); its client must allow the redirect <api-url>/auth/v1/callback" },
  "login-client-id": { type: "string", env: "LOGIN_CLIENT_ID", help: "client id at --login-issuer" },
  "login-client-secret": { type: "string", env: "LOGIN_CLIENT_SECRET", help: "client secret at --login-issuer; leave out for a public client (PKCE is always used)" },
  "login-redirect-origins": {
    type: "string",
    env: "LOGIN_REDIRECT_ORIGINS",
    help: "comma-separated origins (https://app.example.com) a login may send its code to, besides loopback addresses (the CLI)",
  },
  "login-token-lifetime": { type: "string", env: "LOGIN_TOKEN_LIFETIME", default: "1h", help: "lifetime of a person's access token; at most 1h (longer is cut to 1h)" },
  "refresh-token-lifetime": { type: "string", env: "REFRESH_TOKEN_LIFETIME", default: "7d", help: "how long a person's refresh token lives unused" },
  "refresh-token-max-lifetime": { type: "string", env: "REFRESH_TOKEN_MAX_LIFETIME", default: "30d", help: "how long a login's refresh tokens live in all; then the person signs in again" },
  "org-refresh-token-max-lifetime": {
    type: "string",
    env: "ORG_REFRESH_TOKEN_MAX_LIFETIME",
    default: "12h",
    help: "the same for a login through an organization's identity provider (at most --refresh-token-max-lifetime)",
  },
  "log-level": { type: "string", env: "LOG_LEVEL", default: "info", help: LOG_LEVELS.join(", ") },
  "audit-log": { type: "string", env: "AUDIT_LOG", help: "file the audit log (one JSON line per changing call on either host) is appended to, - for stdout; reopened on SIGHUP; default none" },
  "metrics-port": { type: "string", env: "METRICS_PORT", default: "9464", help: "port of GET /metrics (Prometheus), on --host; off: no metrics listener" },
  "cors-origins": { type: "string", env: "CORS_ORIGINS", help: "comma-separated browser origins allowed to call the API host (e.g. https://app.example.com), or *; default none" },
  ...advisoryFeedOptions,
  "retention-interval": {
    type: "string",
    env: "RETENTION_INTERVAL",
    default: "1h",
    help: "how often the repos' retention policies are applied (one replica at a time), e.g. 15m; off: only by platform-api registry retention",
  },
  ...scanOptions,
  ...poolSizeOption,
  ...limitOptions,
};

const bootstrapOptions: Record<string, OptionSpec> = {
  org: { type: "string", help: "name of the organization to create (required)" },
  output: { type: "string", help: "write the JSON to this file (mode 0600) instead of stdout, only once everything succeeded" },
  db: storeOptions.db,
  "api-url": storeOptions["api-url"],
};

const ownersOptions: Record<string, OptionSpec> = {
  org: { type: "string", help: "name of the organization (required)" },
  db: storeOptions.db,
};

const tokenOptions: Record<string, OptionSpec> = {
  identity: { type: "string", help: "uid of an existing identity (required)" },
  audience: { type: "string", help: "token audience; default the API URL" },
  ttl: { type: "string", default: "1h", help: "lifetime, e.g. 15m" },
  db: storeOptions.db,
  "api-url": storeOptions["api-url"],
};

/** The composition root's own commands, and every domain's (their lines in `--help`, in this order). */
const OWN_SUMMARIES: Record<string, string> = {
  serve: "start the API host and the registry host",
  bootstrap: "create an organization with an owner identity and print a token for it",
  token: "print an access token for an existing identity",
  owners: "print an organization's owner identities (to get a token for one again)",
};
const KEYS_SUMMARIES: Record<string, string> = {
  "keys rotate": "add a signing key (it signs after --activate-in) and remove keys retired long enough",
  "keys list": "print the signing keys and which one signs",
};
const SUMMARIES: Record<string, string> = {
  ...OWN_SUMMARIES,
  ...Object.fromEntries(Object.entries(DOMAIN_COMMANDS).map(([name, command]) => [name, command.summary])),
  ...KEYS_SUMMARIES,
  ...Object.fromEntries(Object.entries(CLIENT_COMMANDS).map(([name, command]) => [name, command.summary])),
};

const COMMANDS = `Commands:\n${Object.entries(SUMMARIES).map(([name, summary]) => `  ${name.padEnd(17)} ${summary}`).join("\n")}\n`;

const HELP = `Usage: platform-api <command> [options]

${COMMANDS}
Run "platform-api <command> --help" for a command's options.
`;

/** The help of a command group (`registry`, `advisories`, `libraries`): its lines of the command list. */
function groupHelp(group: string): string {
  const lines = COMMANDS.split("\n").filter((line) => line.startsWith(`  ${group} `));
  return `Usage: platform-api ${group} <subcommand> [options]\n\nSubcommands:\n${lines.join("\n")}\n\nRun "platform-api ${group} <subcommand> --help" for its options.\n`;
}

/** `a`, `a and b`, `a, b and c`. */
function listed(words: readonly string[], conjunction: "and" | "or"): string {
  return words.length > 1 ? `${words.slice(0, -1).join(", ")} ${conjunction} ${words.at(-1)}` : (words[0] ?? "");
}

/** The subcommand of a command group; undefined when help was asked for (and printed). */
function subcommandOf(group: string, args: string[], known: string[]): string | undefined {
  const [sub] = args;
  if (sub === "--help" || sub === "-h" || sub === "help") return void process.stdout.write(groupHelp(group));
  if (sub === undefined) throw new UsageError(`${group} needs a subcommand: ${listed(known, "or")}`);
  if (!known.includes(sub)) throw new UsageError(`unknown ${group} subcommand "${sub}"; it has ${listed(known, "and")}`);
  return sub;
}

/** `--metrics-port`: a port number (0 for any free one), or `off`. */
function metricsPortOf(value: string): number | undefined {
  if (value === "off") return undefined;
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65535) throw new UsageError(`--metrics-port: "${value}" is not a port number (0 to 65535) or off`);
  return Number(value);
}

/** `--cors-origins`: `*`, or origins such as `https://app.example.com` (scheme, host and port only), comma-separated. */
function corsOriginsOf(value: string | undefined): string[] {
  const origins = (value ?? "").split(",").map((s) => s.trim()).filter((s) => s !== "");
  for (const origin of origins) {
    if (origin === "*") continue;
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      parsed = undefined;
    }
    if (!parsed || parsed.origin !== origin) throw new UsageError(`--cors-origins: "${origin}" is not an origin like https://app.example.com (scheme, host, optional port; no path or trailing /)`);
  }
  return origins;
}

/** The `--login-*` and refresh options. */
function loginOf(o: Record<string, string | boolean | undefined>): Partial<LoginConfig> {
  const issuer = (o["login-issuer"] as string | undefined) ?? "";
  const clientId = (o["login-client-id"] as string | undefined) ?? "";
  if ((issuer === "") !== (clientId === "")) throw new UsageError("--login-issuer and --login-client-id go together");
  if (issuer !== "") urlOf("login-issuer", o);
  const redirectOrigins = corsOriginsOf(o["login-redirect-origins"] as string | undefined).filter((origin) => origin !== "*");
  const accessTokenTtlSeconds = durationMsOf(o, "login-token-lifetime") / 1000;
  return {
    issuer,
    clientId,
    clientSecret: (o["login-client-secret"] as string | undefined) ?? "",
    redirectOrigins,
    accessTokenTtlSeconds,
    refreshLifetimeMs: durationMsOf(o, "refresh-token-lifetime"),
    refreshMaxLifetimeMs: durationMsOf(o, "refresh-token-max-lifetime"),
    organizationRefreshMaxLifetimeMs: durationMsOf(o, "org-refresh-token-max-lifetime"),
  };
}

/** A port option: a whole number from 0 (any free port) to 65535. */
function portOf(name: string, options: Record<string, string | boolean | undefined>): number {
  const text = String(options[name]);
  if (!/^\d{1,5}$/.test(text) || Number(text) > 65535) throw new UsageError(`--${name}: "${text}" is not a port number (0 to 65535)`);
  return Number(text);
}

/** A duration option of at least one second (`--events-retention`, `--events-retry-period`), in ms. */
function durationMsOf(options: Record<string, string | boolean | undefined>, name: string): number {
  try {
    const seconds = parseDuration(options[name] as string);
    if (seconds < 1) throw new Error("must be at least 1s");
    return seconds * 1000;
  } catch (error) {
    throw new UsageError(`--${name}: ${(error as Error).message}`);
  }
}

/** A URL option, when given: http or https with a host. */
function urlOf(name: string, options: Record<string, string | boolean | undefined>): string | undefined {
  const text = options[name] as string | undefined;
  if (text === undefined) return undefined;
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:") || url.hostname === "") throw new UsageError(`--${name}: "${text}" is not an http:// or https:// URL`);
  return text;
}

function apiUrlOf(options: Record<string, string | boolean | undefined>): string {
  return urlOf("api-url", options) ?? `http://localhost:${process.env.PORT || "8080"}`;
}

/** How a bound address reads in a URL: the wildcard addresses as they are (`0.0.0.0`, `[::]`), IPv6 in brackets. */
function urlHost(address: string): string {
  return address.includes(":") ? `[${address}]` : address;
}

/** A listen failure as one line naming the option to change; other errors are rethrown. */
function listenError(error: NodeJS.ErrnoException, option: string, host: string, port: number): Error {
  const where = `${urlHost(host)}:${port}`;
  if (error.code === "EADDRINUSE") return new CommandError(`--${option} ${port}: ${where} is already in use by another process`);
  if (error.code === "EACCES") return new CommandError(`--${option} ${port}: not allowed to listen on ${where} (ports below 1024 need privileges)`);
  if (error.code === "EADDRNOTAVAIL" || error.code === "ENOTFOUND" || error.code === "EAI_AGAIN") return new CommandError(`--host ${host}: not an address of this machine`);
  return error;
}

async function serve(args: string[]): Promise<void> {
  const o = parse(args, serveOptions);
  if (o.help) return void process.stdout.write(usage("serve", "Start the API host and the registry host.", serveOptions));
  const logLevel = o["log-level"] as string;
  if (!isLogLevel(logLevel)) throw new UsageError(`--log-level: "${logLevel}" is not one of ${LOG_LEVELS.join(", ")}`);
  const organizationCreation = o["org-creation"] as string;
  if (!ORGANIZATION_CREATION_VALUES.includes(organizationCreation as OrganizationCreation)) {
    throw new UsageError(`--org-creation must be ${ORGANIZATION_CREATION_VALUES.join(" or ")}`);
  }
  const upstreamIssuers = { allowHttp: flag("allow-http-issuers", o), allowPrivateAddresses: flag("allow-private-issuers", o) };
  const upstreamRegistries = { allowHttp: flag("allow-http-upstreams", o), allowPrivateAddresses: flag("allow-private-upstreams", o), timeoutMs: durationMsOf(o, "upstream-timeout") };
  const port = portOf("port", o);
  const registryPort = portOf("registry-port", o);
  const host = o.host as string;
  if (host === "") throw new UsageError("--host is empty: give an address such as 0.0.0.0, 127.0.0.1 or ::");
  const limits = limitsOf(o);
  const eventsRetentionMs = durationMsOf(o, "events-retention");
  const eventsRetryPeriodMs = durationMsOf(o, "events-retry-period");
  const eventsConcurrency = countOf("events-concurrency", o);
  const poolSize = countOf("db-pool-size", o);
  const scan = scanConfigFrom(o);
  const tlsFiles = tlsFilesOf(o);
  const scheme = tlsFiles ? "https" : "http";
  const apiUrl = urlOf("api-url", o) ?? `${scheme}://localhost:${port}`;
  const registryUrl = urlOf("registry-url", o) ?? `${scheme}://localhost:${registryPort}`;
  const metricsPort = metricsPortOf(o["metrics-port"] as string);
  const corsOrigins = corsOriginsOf(o["cors-origins"] as string | undefined);
  const login = loginOf(o);
  const advisoryFeeds = { ...(await advisoryFeedsOf("advisory-feed", o)), intervalMs: durationMsOf(o, "advisory-sync-interval") };
  const retention = { intervalMs: o["retention-interval"] === "off" ? 0 : durationMsOf(o, "retention-interval") };
  const blobRedirect = blobRedirectOf(o);

  const [{ readTlsCredentials, describeCertificate, TlsCredentialsError }, { createLogger }] = await Promise.all([import("../transport/tls-credentials.js"), import("../logger.js")]);
  const credentials = tlsFiles && (await readTlsCredentials(tlsFiles).catch((error: unknown) => {
    throw error instanceof TlsCredentialsError ? new CommandError(error.message) : error;
  }));
  const [{ openStore }, { createServer }, { startTracingFromEnv }] = await Promise.all([import("../server/open-store.js"), import("../server/server.js"), import("../telemetry/tracing.js")]);
  const logger = createLogger(logLevel);
  // The server's one line to stderr (where it listens) must not end it when nobody reads stderr any more.
  process.stderr.on("error", () => {});
  const audit = await auditLogOf(o["audit-log"] as string | undefined, logger);
  const stopTracing = await startTracingFromEnv(process.env, logger).catch((error: unknown) => {
    throw new UsageError((error as Error).message);
  });
  const content = await contentStoreOf(o, true);
  const store = await openStore(o.db as string, {
    lockTimeoutMs: limits.lockTimeoutMs,
    statementTimeoutMs: limits.requestTimeoutMs,
    poolSize,
    onConnectionLost: (error) => logger.warn("the database closed a pooled connection; another is opened when needed", { error: error.message }),
  });
  const server = await createServer(
    store,
    {
      apiUrl,
      registryUrl,
      errorDomain: o["error-domain"] as string | undefined,
      publicOrganization: o["public-org"] as string,
      organizationCreation: organizationCreation as OrganizationCreation,
      upstreamIssuers,
      upstreamRegistries,
      corsOrigins,
      login,
      events: {
        allowLocalSinks: flag("events-allow-local-sinks", o),
        retentionMs: eventsRetentionMs,
        retryPeriodMs: eventsRetryPeriodMs,
        concurrency: eventsConcurrency,
      },
      advisoryFeeds,
      retention,
      scan,
      blobRedirect,
      logLevel,
      limits,
      tls: credentials,
    },
    logger,
    content,
    audit,
  );
  const listen = (s: typeof server.api.server, p: number, option: string) =>
    new Promise<string>((resolve, reject) => {
      s.once("error", (error: NodeJS.ErrnoException) => reject(listenError(error, option, host, p)));
      s.listen(p, host, () => {
        const address = s.address() as { address: string; port: number };
        resolve(`${scheme}://${urlHost(address.address)}:${address.port}`);
      });
    });
  let api: string, registry: string, metrics: string | undefined;
  try {
    api = await listen(server.api.server, port, "port");
    registry = await listen(server.registry.server, registryPort, "registry-port");
    // Metrics are plain HTTP on their own port, with or without TLS on the hosts.
    if (metricsPort !== undefined) metrics = (await listen(server.metrics.server, metricsPort, "metrics-port")).replace(/^https:/, "http:");
  } catch (error) {
    await server.close();
    await store.close();
    throw error;
  }
  // Every listener is bound: only now may background work (pruning among it) touch the store.
  server.startWork();
  logger.info("listening", { api, registry, apiUrl, registryUrl, store: store.description, ...(credentials && { tls: describeCertificate(credentials) }) });
  if (metrics !== undefined) logger.info("metrics", { url: `${metrics}/metrics` });
  process.stderr.write(`platform-api: API on ${api}, registry on ${registry}, store ${store.description}\n`);

  if (tlsFiles) {
    // SIGHUP: reread the certificate and key; new connections get them, open ones keep theirs.
    process.on("SIGHUP", () => {
      void readTlsCredentials(tlsFiles).then(
        (next) => {
          server.api.setCredentials(next);
          server.registry.setCredentials(next);
          logger.info("TLS certificate reloaded", describeCertificate(next));
        },
        (error: unknown) => logger.error("TLS certificate not reloaded; the previous one stays", { error: (error as Error).message }),
      );
    });
  }

  // SIGHUP also reopens the audit log by its path (after logrotate moved it).
  if (audit) process.on("SIGHUP", () => reopenAuditLog(audit, logger));

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info("stopping", { signal });
    await server.close();
    await store.close();
    audit?.close();
    await stopTracing?.();
    logger.info("stopped");
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
}

/** `--audit-log`: the audit log open for appending, or undefined for none. Throws a CommandError when it cannot be opened. */
async function auditLogOf(target: string | undefined, logger: Logger): Promise<AuditLog | undefined> {
  if (target === undefined || target === "") return undefined;
  const { AuditLogError, openAuditLog } = await import("../telemetry/audit-log.js");
  try {
    return openAuditLog(target, { onFailure: (error) => logger.error("audit log write failed; failures are counted in audit_log_write_failures_total until one succeeds", { error: error.message }) });
  } catch (error) {
    throw error instanceof AuditLogError ? new CommandError(`--audit-log: ${error.message}`) : error;
  }
}

function reopenAuditLog(audit: AuditLog, logger: Logger): void {
  try {
    audit.reopen();
    logger.info("audit log reopened");
  } catch (error) {
    logger.error("audit log not reopened; the previous file stays in use", { error: (error as Error).message });
  }
}

/** `--tls-cert` and `--tls-key`: both or neither. */
function tlsFilesOf(options: Record<string, string | boolean | undefined>): { certPath: string; keyPath: string } | undefined {
  const certPath = (options["tls-cert"] as string | undefined) || undefined;
  const keyPath = (options["tls-key"] as string | undefined) || undefined;
  if (certPath === undefined && keyPath === undefined) return undefined;
  if (certPath === undefined) throw new UsageError("--tls-key needs --tls-cert");
  if (keyPath === undefined) throw new UsageError("--tls-cert needs --tls-key");
  return { certPath, keyPath };
}

async function bootstrap(args: string[]): Promise<void> {
  const o = parse(args, bootstrapOptions);
  if (o.help) return void process.stdout.write(usage("bootstrap", "Create an organization with an owner identity; print {organization, identity, token}.", bootstrapOptions));
  if (!o.org) throw new UsageError("--org is required");
  const apiUrl = apiUrlOf(o);
  const [{ openStore }, { bootstrapOrganization }, { createTokenService }] = await Promise.all([import("../server/open-store.js"), import("../server/bootstrap.js"), import("../access/tokens.js")]);
  const store = await openStore(o.db as string);
  try {
    const now = Date.now();
    const { organization, identity } = await bootstrapOrganization(store, o.org as string, now);
    const tokens = await createTokenService(store.db, apiUrl);
    const { token } = await tokens.issue({ subject: identity.uid, audience: apiUrl });
    const out = `${JSON.stringify({ organization: { uid: organization.uid, name: organization.name }, identity: { uid: identity.uid }, token })}\n`;
    if (o.output === undefined) process.stdout.write(out);
    else await writeFileAtomically(o.output as string, out);
  } finally {
    await store.close();
  }
}

/** Writes `text` to `path` (mode 0600) by renaming a file written beside it: the file is whole or untouched. */
async function writeFileAtomically(path: string, text: string): Promise<void> {
  const { writeFile, rename, rm } = await import("node:fs/promises");
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    await writeFile(temporary, text, { mode: 0o600, flag: "wx" });
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw new CommandError(`--output: ${(error as Error).message}`);
  }
}

async function owners(args: string[]): Promise<void> {
  const o = parse(args, ownersOptions);
  if (o.help) return void process.stdout.write(usage("owners", "Print {organization, owners: [{uid, name}]}: the identities bound to the owner role on it.", ownersOptions));
  if (!o.org) throw new UsageError("--org is required");
  const [{ openStore }, { findOrganizationByName, ownersOf }, { builtInRole }] = await Promise.all([
    import("../server/open-store.js"),
    import("../domains/iam/index.js"),
    import("../access/capabilities.js"),
  ]);
  const store = await openStore(o.db as string);
  try {
    const organization = await findOrganizationByName(store.db, o.org as string);
    if (!organization) throw new CommandError(`no organization is named "${o.org as string}"`);
    const found = await ownersOf(store.db, organization.uid, builtInRole("owner").uid);
    process.stdout.write(`${JSON.stringify({ organization: { uid: organization.uid, name: organization.name }, owners: found })}\n`);
  } finally {
    await store.close();
  }
}

async function token(args: string[]): Promise<void> {
  const o = parse(args, tokenOptions);
  const [{ isUidp }, { createTokenService, MAX_TOKEN_TTL_SECONDS }] = await Promise.all([import("../aip/uidp.js"), import("../access/tokens.js")]);
  if (o.help) return void process.stdout.write(usage("token", `Print a fresh access token for an existing identity, living at most ${MAX_TOKEN_TTL_SECONDS / 3600}h.`, tokenOptions));
  let ttl: number;
  try {
    ttl = parseDuration(o.ttl as string);
  } catch (error) {
    throw new UsageError(`--ttl: ${(error as Error).message}`);
  }
  if (ttl > MAX_TOKEN_TTL_SECONDS) throw new UsageError(`--ttl must be at most ${MAX_TOKEN_TTL_SECONDS}s`);
  const identity = o.identity as string | undefined;
  if (!identity || !isUidp(identity)) throw new UsageError("--identity must be the uid of an identity");
  const apiUrl = apiUrlOf(o);
  const [{ openStore }, { prepareStore }, { getIdentity }] = await Promise.all([import("../server/open-store.js"), import("../server/bootstrap.js"), import("../domains/iam/index.js")]);
  const store = await openStore(o.db as string);
  try {
    await prepareStore(store, Date.now());
    await getIdentity(store.db, identity);
    const tokens = await createTokenService(store.db, apiUrl);
    const issued = await tokens.issue({ subject: identity, audience: (o.audience as string | undefined) ?? apiUrl, ttlSeconds: ttl });
    process.stdout.write(`${issued.token}\n`);
  } finally {
    await store.close();
  }
}

/** Runs a declared command (a domain's, or a client command): parses its options, prints its help, hands it `context`. */
async function runCommand<Context>(name: string, command: Command<Context>, args: string[], context: Context): Promise<void> {
  const operands: string[] = [];
  const options = parse(args, command.options, command.operands === undefined ? undefined : operands);
  if (options.help) return void process.stdout.write(usage(name, command.description, command.options, command.operands));
  const status = await command.run({ options, operands, context });
  if (typeof status === "number") process.exitCode = status;
}

/** Runs the declared command `name`: a domain's with the store opener, a client command with no context. */
async function runDeclared(name: string, args: string[]): Promise<void> {
  if (Object.hasOwn(CLIENT_COMMANDS, name)) return runCommand(name, CLIENT_COMMANDS[name], args, undefined);
  const context: CommandContext = {
    openStore: async (url, databaseOptions) => (await import("../server/open-store.js")).openStore(url, databaseOptions),
    reactions: { advisoriesChanged: async (...change) => (await import("../server/domains.js")).REACTIONS.advisoriesChanged(...change) },
  };
  await runCommand(name, DOMAIN_COMMANDS[name], args, context);
}

async function keys(args: string[]): Promise<void> {
  if (subcommandOf("keys", args, SUBCOMMANDS.keys) === undefined) return;
  const { signingKeysCommand } = await import("./signing-keys.js");
  await signingKeysCommand(args, (message) => new UsageError(message));
}

/** Command groups (`registry`, `keys`) and their subcommands. */
const SUBCOMMANDS: Record<string, string[]> = {};
for (const name of Object.keys(SUMMARIES).filter((n) => n.includes(" "))) {
  const [group, sub] = name.split(" ");
  (SUBCOMMANDS[group] ??= []).push(sub);
}

/** Runs the subcommand of a declared command group (`registry import`, `invite accept`). */
function declaredGroup(group: string): (args: string[]) => Promise<void> {
  return async (args) => {
    const sub = subcommandOf(group, args, SUBCOMMANDS[group]);
    if (sub !== undefined) await runDeclared(`${group} ${sub}`, args.slice(1));
  };
}

/** Every command by its first word, in the order of `--help`: the root's own, else a group, else a declared command. */
const OWN_COMMANDS: Record<string, (args: string[]) => Promise<void>> = { serve, bootstrap, token, owners, keys };
const commands: Record<string, (args: string[]) => Promise<void>> = Object.fromEntries(
  [...new Set(Object.keys(SUMMARIES).map((name) => name.split(" ")[0]))].map((name) => [
    name,
    OWN_COMMANDS[name] ?? (SUBCOMMANDS[name] ? declaredGroup(name) : (args: string[]) => runDeclared(name, args)),
  ]),
);

/** The command the user ran, with its subcommand when it has a known one: `registry import`, `serve`. */
function commandName(argv: string[]): string {
  const [command, sub] = argv;
  return SUBCOMMANDS[command]?.includes(sub) ? `${command} ${sub}` : command;
}

/** Whether the command the user ran declares operands (an invitation code, a path), which may begin with "-". */
function takesOperands(argv: string[]): boolean {
  const name = commandName(argv);
  const declared = Object.hasOwn(CLIENT_COMMANDS, name) ? CLIENT_COMMANDS[name] : Object.hasOwn(DOMAIN_COMMANDS, name) ? DOMAIN_COMMANDS[name] : undefined;
  return declared?.operands !== undefined;
}

/**
 * The message of an error the user can act on, in one line; undefined for an unexpected error
 * (a bug), which is reported with its stack. Store and API errors (a bad name, a missing
 * identity, an unreachable database) are the user's to act on.
 */
async function userMessage(error: unknown, argv: string[]): Promise<string | undefined> {
  const help = `(see "${["platform-api", commandName(argv), "--help"].filter(Boolean).join(" ")}")`;
  if (error instanceof UsageError) return `${error.message} ${help}`;
  if (error instanceof CommandError) return error.message;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string" && code.startsWith("ERR_PARSE_ARGS")) {
    const quoted = /'([^']*)'/.exec((error as Error).message)?.[1];
    const message =
      code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" ? `${quoted} is not an option of ${commandName(argv)}${takesOperands(argv) ? `; an operand that begins with "-" goes after "--" (platform-api ${commandName(argv)} [options] -- <operand>)` : ""}`
      : code === "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL" ? `${commandName(argv)} takes no arguments besides its options: "${quoted}"`
      : (error as Error).message.split(/\.?\n|\. /)[0];
    return `${message} ${help}`;
  }
  const [{ ApiError }, { StoreError }, { StorageUnavailable }] = await Promise.all([import("../aip/errors.js"), import("../store/errors.js"), import("../domains/registry/index.js")]);
  if (error instanceof ApiError || error instanceof StoreError || error instanceof StorageUnavailable) return (error as Error).message;
  if (typeof code === "string" && /^(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EACCES|ENOENT|EROFS|ENOSPC|28P01|3D000|3F000|SQLITE_CANTOPEN|SQLITE_NOTADB)$/.test(code)) {
    return `${(error as Error).message}${/^(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|28P01|3D000|3F000)$/.test(code) ? " (the database of --db)" : ""}`;
  }
  return undefined;
}

export async function main(argv: string[]): Promise<void> {
  const [command, ...args] = argv;
  if (!command || command === "--help" || command === "-h" || command === "help") {
    process.stdout.write(HELP);
    return;
  }
  const known = Object.hasOwn(commands, command);
  try {
    if (!known) throw new UsageError(`unknown command "${command}"; the commands are ${Object.keys(commands).join(", ")}`);
    await commands[command](args);
  } catch (error) {
    const message = await userMessage(error, known ? argv : [""]);
    process.stderr.write(`platform-api: ${message ?? String((error as Error).stack ?? error)}\n`);
    process.exit(message === undefined ? 1 : 2);
  }
}
