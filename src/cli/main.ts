import { OsvFeedError } from "../advisories/osv/errors.js";
import { ApiError } from "../api/errors.js";
import { StoreError } from "../store/errors.js";
import { isUidp } from "../api/uidp.js";
import { createTokenService, MAX_TOKEN_TTL_SECONDS } from "../auth/tokens.js";
import { signingKeysCommand } from "./signing-keys.js";
import { bootstrapOrganization, prepareStore } from "../bootstrap.js";
import { defaultLimits, ORGANIZATION_CREATION_VALUES, type OrganizationCreation } from "../config.js";
import { createLogger, isLogLevel } from "../logger.js";
import { createFileContentStore, type ContentStore } from "../registry/content-store.js";
import { createS3ContentStore, InvalidStorageUrl, parseS3Url, StorageUnavailable } from "../registry/s3-content-store.js";
import { collectGarbage, UPLOAD_LIFETIME_MS } from "../registry/gc.js";
import { importImages } from "../registry/import.js";
import { createServer } from "../server.js";
import { getIdentity } from "../domains/iam/store/identities.js";
import { openStore } from "../store/store.js";
import { importAdvisories } from "./advisories-import.js";
import { importLibraryDocuments } from "./libraries-import.js";
import { LibraryFeedError } from "../libraries/feed.js";
import { parse, parseDuration, storeOptions, usage, type OptionSpec } from "./options.js";

const serveOptions: Record<string, OptionSpec> = {
  port: { type: "string", env: "PORT", default: "8080", help: "API port (gRPC, gRPC-Web, Connect, REST)" },
  "registry-port": { type: "string", env: "REGISTRY_PORT", default: "5000", help: "registry port" },
  host: { type: "string", env: "HOST", default: "0.0.0.0", help: "address to listen on" },
  ...storeOptions,
  "registry-url": { type: "string", env: "REGISTRY_URL", help: "public URL of the registry host; default http://localhost:<registry-port>" },
  "error-domain": { type: "string", env: "ERROR_DOMAIN", help: "ErrorInfo.domain of every error; default the host name of --api-url" },
  "public-org": { type: "string", env: "PUBLIC_ORG", default: "public", help: "organization whose images' latest and latest-dev tags are readable anonymously" },
  "org-creation": {
    type: "string",
    env: "ORG_CREATION",
    default: "bootstrap",
    help: "who may create organizations over the API: bootstrap (nobody; use the bootstrap command) or anyone (any verified caller)",
  },
  "events-allow-local-sinks": { type: "boolean", env: "EVENTS_ALLOW_LOCAL_SINKS", help: "let subscriptions name http:// sinks and loopback or private addresses (default: https on public addresses only)" },
  "allow-http-issuers": { type: "boolean", env: "ALLOW_HTTP_ISSUERS", help: "let the token exchange fetch other issuers' keys over plain http (default: https only)" },
  "allow-private-issuers": {
    type: "boolean",
    env: "ALLOW_PRIVATE_ISSUERS",
    help: "let the token exchange fetch keys from hosts on loopback, private or link-local addresses (default: public addresses only)",
  },
  "log-level": { type: "string", env: "LOG_LEVEL", default: "info", help: "debug, info, warn, error or silent" },
  "db-pool-size": { type: "string", env: "DB_POOL_SIZE", default: "10", help: "PostgreSQL: connections this process keeps open at most" },
};

const bootstrapOptions: Record<string, OptionSpec> = {
  org: { type: "string", help: "name of the organization to create (required)" },
  ...storeOptions,
};

const tokenOptions: Record<string, OptionSpec> = {
  identity: { type: "string", help: "uid of an existing identity (required)" },
  audience: { type: "string", help: "token audience; default the API URL" },
  ttl: { type: "string", default: "1h", help: `lifetime, e.g. 15m; at most ${MAX_TOKEN_TTL_SECONDS / 3600}h` },
  ...storeOptions,
};

const importOptions: Record<string, OptionSpec> = {
  repo: { type: "string", help: "<organization>/<repo name>; created under the organization (or --group) when missing (required)" },
  tag: { type: "string", help: "tag to point at the single top-level manifest (default: the layout's ref names)" },
  group: { type: "string", help: "uid of the group that holds the repo when it is created" },
  ...storeOptions,
};

const gcOptions: Record<string, OptionSpec> = {
  grace: { type: "string", default: "24h", help: "keep blobs a push used within this long, e.g. 90m (protects pushes in progress)" },
  ...storeOptions,
};

const advisoriesImportOptions: Record<string, OptionSpec> = {
  strict: { type: "boolean", help: "stop at the first refused record (exit 1); by default it is reported and skipped" },
  db: storeOptions.db,
};

const librariesImportOptions: Record<string, OptionSpec> = {
  org: { type: "string", help: "the organization (uid or name) whose library index receives the artifacts (required)" },
  strict: { type: "boolean", help: "stop at the first refused document (exit 1); by default it is reported and skipped" },
  db: storeOptions.db,
};

const HELP = `Usage: platform-api <command> [options]

Commands:
  serve             start the API host and the registry host
  bootstrap         create an organization with an owner identity and print a token for it
  token             print an access token for an existing identity
  registry import   load image manifests into a repo from OCI image layouts or manifest files
  registry gc       remove abandoned uploads and the blobs no manifest names (safe while serving)
  advisories import load OSV advisory records from .json files, directories or .zip archives
  libraries import  load an organization's library index from npm and PyPI metadata documents
  keys rotate       add a signing key (it signs after --activate-in) and remove keys retired long enough
  keys list         print the signing keys and which one signs

Run "platform-api <command> --help" for a command's options.
`;

class UsageError extends Error {}

/** A boolean option: the flag, or its environment variable as true/1 or false/0 (or empty). */
function flag(name: string, options: Record<string, string | boolean | undefined>): boolean {
  const value = options[name];
  if (typeof value === "boolean" || value === undefined) return value === true;
  if (/^(true|1)$/i.test(value)) return true;
  if (/^(false|0|)$/i.test(value)) return false;
  throw new UsageError(`--${name}: "${value}" is not true or false`);
}

/**
 * The registry's content store: `--registry-storage s3://...` or the folder `--registry-dir`. With
 * `checked`, an S3 bucket must answer first (a server fails at start, not at its first push).
 */
async function contentStoreOf(options: Record<string, unknown>, checked = false): Promise<ContentStore> {
  const storage = options["registry-storage"] as string | undefined;
  if (storage === undefined || storage === "") return createFileContentStore(options["registry-dir"] as string);
  let store: ReturnType<typeof createS3ContentStore>;
  try {
    store = createS3ContentStore(parseS3Url(storage));
  } catch (error) {
    if (error instanceof InvalidStorageUrl) throw new UsageError(`--registry-storage: ${error.message}`);
    throw error;
  }
  if (checked) await store.checkReachable();
  return store;
}

function apiUrlOf(options: Record<string, unknown>): string {
  return (options["api-url"] as string | undefined) ?? `http://localhost:${process.env.PORT ?? "8080"}`;
}

async function serve(args: string[]): Promise<void> {
  const o = parse(args, serveOptions);
  if (o.help) return void process.stdout.write(usage("serve", "Start the API host and the registry host.", serveOptions));
  const logLevel = o["log-level"] as string;
  if (!isLogLevel(logLevel)) throw new UsageError(`--log-level must be debug, info, warn, error or silent`);
  const organizationCreation = o["org-creation"] as string;
  if (!ORGANIZATION_CREATION_VALUES.includes(organizationCreation as OrganizationCreation)) {
    throw new UsageError(`--org-creation must be ${ORGANIZATION_CREATION_VALUES.join(" or ")}`);
  }
  const upstreamIssuers = { allowHttp: flag("allow-http-issuers", o), allowPrivateAddresses: flag("allow-private-issuers", o) };
  const port = Number(o.port);
  const registryPort = Number(o["registry-port"]);
  const poolSize = Number(o["db-pool-size"]);
  if (!Number.isInteger(poolSize) || poolSize < 1 || poolSize > 1000) throw new UsageError("--db-pool-size must be a whole number from 1 to 1000");
  const logger = createLogger(logLevel);
  const content = await contentStoreOf(o, true);
  const store = await openStore(o.db as string, { lockTimeoutMs: defaultLimits.lockTimeoutMs, poolSize });
  const server = await createServer(
    store,
    {
      apiUrl: (o["api-url"] as string | undefined) ?? `http://localhost:${port}`,
      registryUrl: (o["registry-url"] as string | undefined) ?? `http://localhost:${registryPort}`,
      errorDomain: o["error-domain"] as string | undefined,
      publicOrganization: o["public-org"] as string,
      organizationCreation: organizationCreation as OrganizationCreation,
      upstreamIssuers,
      events: { allowLocalSinks: flag("events-allow-local-sinks", o) },
      logLevel,
      limits: defaultLimits,
    },
    logger,
    content,
  );
  const host = o.host as string;
  const listen = (s: typeof server.api.server, p: number) =>
    new Promise<number>((resolve, reject) => {
      s.once("error", reject);
      s.listen(p, host, () => resolve((s.address() as { port: number }).port));
    });
  const apiPort = await listen(server.api.server, port);
  const regPort = await listen(server.registry.server, registryPort);
  logger.info("listening", { api: `http://localhost:${apiPort}`, registry: `http://localhost:${regPort}`, store: store.description });
  process.stderr.write(`platform-api: API on http://localhost:${apiPort}, registry on http://localhost:${regPort}, store ${store.description}\n`);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info("stopping", { signal });
    await server.close();
    await store.close();
    logger.info("stopped");
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
}

async function bootstrap(args: string[]): Promise<void> {
  const o = parse(args, bootstrapOptions);
  if (o.help) return void process.stdout.write(usage("bootstrap", "Create an organization with an owner identity; print {organization, identity, token}.", bootstrapOptions));
  if (!o.org) throw new UsageError("--org is required");
  const store = await openStore(o.db as string);
  try {
    const now = Date.now();
    const { organization, identity } = await bootstrapOrganization(store, o.org as string, now);
    const tokens = await createTokenService(store.db, apiUrlOf(o));
    const { token } = await tokens.issue({ subject: identity.uid, audience: apiUrlOf(o) });
    process.stdout.write(`${JSON.stringify({ organization: { uid: organization.uid, name: organization.name }, identity: { uid: identity.uid }, token })}\n`);
  } finally {
    await store.close();
  }
}

async function token(args: string[]): Promise<void> {
  const o = parse(args, tokenOptions);
  if (o.help) return void process.stdout.write(usage("token", "Print a fresh access token for an existing identity.", tokenOptions));
  const identity = o.identity as string | undefined;
  if (!identity || !isUidp(identity)) throw new UsageError("--identity must be the uid of an identity");
  const ttl = parseDuration(o.ttl as string);
  if (ttl > MAX_TOKEN_TTL_SECONDS) throw new UsageError(`--ttl must be at most ${MAX_TOKEN_TTL_SECONDS}s`);
  const store = await openStore(o.db as string);
  try {
    await prepareStore(store, Date.now());
    await getIdentity(store.db, identity);
    const tokens = await createTokenService(store.db, apiUrlOf(o));
    const issued = await tokens.issue({ subject: identity, audience: (o.audience as string | undefined) ?? apiUrlOf(o), ttlSeconds: ttl });
    process.stdout.write(`${issued.token}\n`);
  } finally {
    await store.close();
  }
}

async function registry(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  if (sub === "gc") return registryGc(rest);
  if (sub !== "import") throw new UsageError(sub === undefined ? "registry needs a subcommand: import or gc" : `unknown registry subcommand "${sub}"`);
  const paths: string[] = [];
  const o = parse(rest, importOptions, paths);
  const summary =
    "Load image manifests into a repo, from OCI image layout directories or manifest JSON files (paths after the options),\n" +
    "and point tags at them; all of it is stored or none. Prints what was stored as JSON.";
  if (o.help) return void process.stdout.write(usage("registry import [options] <path>...", summary, importOptions));
  if (!o.repo) throw new UsageError("--repo is required");
  if (paths.length === 0) throw new UsageError("give at least one OCI layout directory or manifest file");
  const store = await openStore(o.db as string);
  try {
    const result = await importImages(store, {
      repository: o.repo as string,
      paths,
      tag: o.tag as string | undefined,
      group: o.group as string | undefined,
      now: Date.now(),
      content: await contentStoreOf(o),
    });
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await store.close();
  }
}

async function registryGc(args: string[]): Promise<void> {
  const o = parse(args, gcOptions);
  const summary =
    `Remove uploads not finished within ${UPLOAD_LIFETIME_MS / 3600_000}h of their start, then the blobs (rows and files) that no manifest names\n` +
    "and that no push has uploaded, mounted or referenced within --grace. Safe beside a running server on the same\n" +
    "database and --registry-dir. Prints {uploads, blobs, bytes, recent} as JSON (recent: unnamed blobs kept for their grace).";
  if (o.help) return void process.stdout.write(usage("registry gc", summary, gcOptions));
  let graceSeconds: number;
  try {
    graceSeconds = parseDuration(o.grace as string);
  } catch (error) {
    throw new UsageError(`--grace: ${(error as Error).message}`);
  }
  const store = await openStore(o.db as string);
  try {
    const result = await collectGarbage(store.db, await contentStoreOf(o), { now: Date.now(), graceMs: graceSeconds * 1000 });
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await store.close();
  }
}

async function advisories(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  if (sub !== "import") throw new UsageError(sub === undefined ? "advisories needs a subcommand: import" : `unknown advisories subcommand "${sub}"`);
  const paths: string[] = [];
  const o = parse(rest, advisoriesImportOptions, paths);
  const summary =
    "Load OSV records (https://ossf.github.io/osv-schema/) from .json files, directories of them and .zip archives\n" +
    "(osv.dev's per-ecosystem all.zip). A record with a later `modified` replaces the stored one; the same feed twice\n" +
    "changes nothing. Refused records are reported on stderr with their file and JSON path and skipped.\n" +
    "Prints `read N, new N, updated N, unchanged N, rejected N`.";
  if (o.help) return void process.stdout.write(usage("advisories import [options] <file | directory | .zip>...", summary, advisoriesImportOptions));
  if (paths.length === 0) throw new UsageError("give at least one OSV .json file, directory or .zip archive");
  const store = await openStore(o.db as string);
  try {
    process.exitCode = await importAdvisories(store, paths, flag("strict", o));
  } catch (error) {
    if (error instanceof OsvFeedError) throw new UsageError(error.message);
    throw error;
  } finally {
    await store.close();
  }
}

async function libraries(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  if (sub !== "import") throw new UsageError(sub === undefined ? "libraries needs a subcommand: import" : `unknown libraries subcommand "${sub}"`);
  const paths: string[] = [];
  const o = parse(rest, librariesImportOptions, paths);
  const summary =
    "Load an organization's library index from the ecosystems' own metadata: npm package documents (the registry's\n" +
    "`GET /<package>` or `npm view <package> --json`) and PyPI JSON API documents (`/pypi/<project>/json`), as .json\n" +
    "files or folders of them. Changed metadata replaces the stored artifact; the same documents twice change nothing.\n" +
    "Refused documents are reported on stderr with their file and skipped.\n" +
    "Prints `read N, new N, updated N, unchanged N, rejected N`.";
  if (o.help) return void process.stdout.write(usage("libraries import --org <organization> [options] <file | directory>...", summary, librariesImportOptions));
  if (typeof o.org !== "string" || o.org === "") throw new UsageError("--org is required: the organization (uid or name) whose index receives the artifacts");
  if (paths.length === 0) throw new UsageError("give at least one .json metadata document or folder of them");
  const store = await openStore(o.db as string);
  try {
    process.exitCode = await importLibraryDocuments(store, o.org, paths, flag("strict", o));
  } catch (error) {
    if (error instanceof LibraryFeedError) throw new UsageError(error.message);
    throw error;
  } finally {
    await store.close();
  }
}

const commands: Record<string, (args: string[]) => Promise<void>> = {
  serve,
  bootstrap,
  token,
  registry,
  advisories,
  libraries,
  keys: (args) => signingKeysCommand(args, (message) => new UsageError(message)),
};

export async function main(argv: string[]): Promise<void> {
  const [command, ...args] = argv;
  if (!command || command === "--help" || command === "-h" || command === "help") {
    process.stdout.write(HELP);
    return;
  }
  const run = commands[command];
  try {
    if (!run) throw new UsageError(`unknown command "${command}"`);
    await run(args);
  } catch (error) {
    const known =
      error instanceof UsageError ||
      error instanceof ApiError ||
      error instanceof StoreError ||
      error instanceof StorageUnavailable ||
      (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS");
    process.stderr.write(`platform-api: ${known ? (error as Error).message : String((error as Error).stack ?? error)}\n`);
    if (error instanceof UsageError) process.stderr.write(HELP);
    process.exit(known ? 2 : 1);
  }
}
