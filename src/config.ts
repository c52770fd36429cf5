import type { LogLevel } from "./logger.js";
import type { TlsCredentials } from "./transport/tls-credentials.js";

/** Everything the server is configured with. Defaults are in `defaultLimits` and the CLI. */
export interface ServerConfig {
  /** Public URL of the API host: token issuer and API audience. */
  apiUrl: string;
  /** ErrorInfo.domain of every error (spec 7). Default: the host name of `apiUrl`. */
  errorDomain?: string;
  /** Public URL of the registry host: registry audience. */
  registryUrl: string;
  /** Name of the public organization: its images' `latest` and `latest-dev` tags are readable anonymously on the registry host. Default "public". */
  publicOrganization?: string;
  /** Who may create an organization over the API (CreateGroup with an empty parent). Default "bootstrap". */
  organizationCreation?: OrganizationCreation;
  /** Which OIDC issuers the token exchange may fetch keys from. Default: https on public addresses only. */
  upstreamIssuers?: UpstreamIssuerPolicy;
  /** Browser origins allowed to call the API host (CORS): exact origins or `*`. Default none. */
  corsOrigins?: string[];
  /** People signing in (docs/authorization.md, "People sign in"). Defaults in `defaultLoginConfig`. */
  login?: Partial<LoginConfig>;
  /** Event delivery to subscriptions. Defaults in `defaultEventsConfig`. */
  events?: Partial<EventsConfig>;
  /** Advisory feeds kept current. Defaults in `defaultAdvisoryFeedsConfig`. */
  advisoryFeeds?: Partial<AdvisoryFeedsConfig>;
  /** How the registry's retention policies are applied. Defaults in `defaultRetentionConfig`. */
  retention?: Partial<RetentionConfig>;
  /** How images are scanned for their vulnerability reports, off the event loop. Defaults in `defaultScanConfig`. */
  scan?: Partial<ScanConfig>;
  /** Which upstream registries pull-through may fetch from (`serve --allow-http-upstreams`, `--allow-private-upstreams`). Defaults in `defaultUpstreamRegistriesConfig`. */
  upstreamRegistries?: Partial<UpstreamRegistriesConfig>;
  /** Blob GETs answered by a redirect to the blob's own URL in the content store (`serve --registry-storage-redirect`). Default: off, the registry host sends the bytes. */
  blobRedirect?: BlobRedirectConfig;
  logLevel: LogLevel;
  limits: Limits;
  /** Both hosts speak TLS with these (HTTP/2 by ALPN); cleartext without. */
  tls?: TlsCredentials;
}

/** How events are typed and delivered (README "Events"). */
export interface EventsConfig {
  /** Admit `http://` sinks and sinks on loopback, private and link-local addresses (`serve --events-allow-local-sinks`). */
  allowLocalSinks: boolean;
  /** The first segments of every CloudEvent type: `<prefix>.api.iam.group.created.v1`. */
  typePrefix: string;
  /** How long a delivery is retried after its first failure, ms; then it is marked failed. */
  retryPeriodMs: number;
  /** The first retry's delay, ms; each next one doubles, up to `maxBackoffMs`, with jitter. */
  initialBackoffMs: number;
  maxBackoffMs: number;
  /** One POST to a sink, connect to last byte, ms. */
  timeoutMs: number;
  /** Deliveries in flight at once (to distinct subscriptions). */
  concurrency: number;
  /** Deliveries in flight at once to the subscriptions of one organization (of `concurrency`; by default half of it): the others' share. */
  perOrganization: number;
  /** How often the dispatcher looks for due deliveries, ms. */
  pollIntervalMs: number;
  /** How long an event is kept once it has no delivery left to make, and a failed delivery once given up, ms (`serve --events-retention`). */
  retentionMs: number;
  /** How often the dispatcher prunes what retention lets go, ms. */
  pruneIntervalMs: number;
}

export const defaultEventsConfig: EventsConfig = {
  allowLocalSinks: false,
  typePrefix: "dev.platform",
  retryPeriodMs: 24 * 3600_000,
  initialBackoffMs: 1_000,
  maxBackoffMs: 300_000,
  timeoutMs: 10_000,
  concurrency: 16,
  perOrganization: 8,
  pollIntervalMs: 500,
  retentionMs: 7 * 24 * 3600_000,
  pruneIntervalMs: 3600_000,
};

/** The configuration's events settings over the defaults. */
export function eventsConfigOf(config: Pick<ServerConfig, "events">): EventsConfig {
  const events = { ...defaultEventsConfig, ...config.events };
  // One organization's share is half the slots unless set: a concurrency given alone keeps the rule.
  if (config.events?.perOrganization === undefined) events.perOrganization = Math.max(1, Math.floor(events.concurrency / 2));
  return events;
}

/**
 * `bootstrap`: nobody over the API; organizations come from the operator's `platform-api bootstrap`.
 * `anyone`: any verified caller, who becomes the new organization's owner.
 */
export type OrganizationCreation = "bootstrap" | "anyone";
export const ORGANIZATION_CREATION_VALUES: readonly OrganizationCreation[] = ["bootstrap", "anyone"];

/** People signing in through an OIDC provider. */
export interface LoginConfig {
  /** The server-wide provider (`serve --login-issuer`); none when "". Organizations' IdentityProviders work without it. */
  issuer: string;
  clientId: string;
  /** "" for a public client: PKCE only (PKCE is used in every case). */
  clientSecret: string;
  /** Origins besides loopback that a login may redirect its code to (`--login-redirect-origins`). */
  redirectOrigins: string[];
  /** Lifetime of a person's access token, seconds. */
  accessTokenTtlSeconds: number;
  /** How long a refresh token lives unused, ms. */
  refreshLifetimeMs: number;
  /** How long a login's refresh tokens live in all, ms: then the person signs in again. */
  refreshMaxLifetimeMs: number;
  /**
   * The same for a login through an organization's IdentityProvider (at most `refreshMaxLifetimeMs`):
   * where the provider issues no refresh token a refresh cannot ask it whether the person is still
   * in their groups, so what the groups granted is re-read from the provider at least this often.
   */
  organizationRefreshMaxLifetimeMs: number;
}

export const defaultLoginConfig: LoginConfig = {
  issuer: "",
  clientId: "",
  clientSecret: "",
  redirectOrigins: [],
  accessTokenTtlSeconds: 3600,
  refreshLifetimeMs: 7 * 24 * 3600_000,
  refreshMaxLifetimeMs: 30 * 24 * 3600_000,
  organizationRefreshMaxLifetimeMs: 12 * 3600_000,
};

export function loginConfigOf(config: ServerConfig): LoginConfig {
  return { ...defaultLoginConfig, ...config.login };
}

/** The refresh token lifetimes of a login, as the auth domain takes them: through an organization's provider when `organization`. */
export function refreshLifetimesOf(login: LoginConfig, organization: boolean): { lifetimeMs: number; maxLifetimeMs: number } {
  const maxLifetimeMs = organization ? Math.min(login.organizationRefreshMaxLifetimeMs, login.refreshMaxLifetimeMs) : login.refreshMaxLifetimeMs;
  return { lifetimeMs: login.refreshLifetimeMs, maxLifetimeMs };
}

/** Where the token exchange may fetch another issuer's discovery document and JWKS from. */
export interface UpstreamIssuerPolicy {
  /** Also plain `http://` URLs (default: https only). */
  allowHttp?: boolean;
  /** Also hosts that resolve to loopback, private, link-local or other non-public addresses (default: public only). */
  allowPrivateAddresses?: boolean;
}

export interface Limits {
  /** Largest request body, bytes. */
  maxBodyBytes: number;
  /** Largest request header block, bytes. */
  maxHeaderBytes: number;
  /** Concurrent streams per HTTP/2 connection. */
  maxConcurrentStreams: number;
  /** Longest a unary call may run, ms; on the API host also the longest time to receive a request (HTTP/1.1 408, HTTP/2 stream reset). */
  requestTimeoutMs: number;
  /** Longest time from accepting a connection to its first complete request headers (and its first bytes), ms. Both hosts. */
  headersTimeoutMs: number;
  /** HTTP/1.1: longest a request may go with no byte moving either way, ms. Both hosts. */
  idleTimeoutMs: number;
  /** How long a connection with no request in progress stays open (HTTP/1.1 keep-alive; HTTP/2 session without streams, then GOAWAY), ms. Both hosts. */
  keepAliveTimeoutMs: number;
  /** Open connections per host at most; more are closed on accept. */
  maxConnections: number;
  /** Largest blob the registry accepts, bytes. */
  maxBlobBytes: number;
  /** Longest time to receive one registry request (a blob upload), ms; a download is bounded by `idleTimeoutMs` only. */
  registryRequestTimeoutMs: number;
  /** SQLite: longest a write waits for the write lock another connection holds, ms (then UNAVAILABLE). */
  lockTimeoutMs: number;
  /** Longest one outbound fetch (another issuer's discovery document or JWKS) may take, connect to last byte, ms. */
  upstreamFetchTimeoutMs: number;
  /** Largest discovery document or JWKS fetched from another issuer, bytes. */
  upstreamFetchMaxBytes: number;
  /** Device logins waiting for their person at once (started, neither confirmed nor expired), per client address. */
  maxPendingDeviceLoginsPerClient: number;
  /** The same, all client addresses together. */
  maxPendingDeviceLogins: number;
}

export const defaultLimits: Limits = {
  maxBodyBytes: 4 * 1024 * 1024,
  maxHeaderBytes: 16 * 1024,
  maxConcurrentStreams: 256,
  requestTimeoutMs: 30_000,
  headersTimeoutMs: 30_000,
  idleTimeoutMs: 120_000,
  keepAliveTimeoutMs: 65_000,
  maxConnections: 4096,
  maxBlobBytes: 10 * 1024 ** 3,
  registryRequestTimeoutMs: 3600_000,
  lockTimeoutMs: 5_000,
  upstreamFetchTimeoutMs: 5_000,
  upstreamFetchMaxBytes: 256 * 1024,
  maxPendingDeviceLoginsPerClient: 10,
  maxPendingDeviceLogins: 10_000,
};

/** Advisory feeds the server keeps current (`serve --advisory-feed`; README "Keeping advisories current"). */
export interface AdvisoryFeedsConfig {
  /** https URLs of OSV archives (`.zip`) or of folders with `modified_id.csv`; none: no sync. */
  urls: string[];
  /** How often each feed is fetched (a conditional GET), ms; also the longest backoff after failures. */
  intervalMs: number;
  /** Also plain `http://` feeds (`serve --allow-http-feeds`). */
  allowHttp: boolean;
  /** Also feeds on loopback, private or link-local addresses (`serve --allow-private-feeds`). */
  allowPrivateAddresses: boolean;
  /** Longest one download (an archive, the index or one record) may take, connect to last byte, ms (`serve --advisory-fetch-timeout`). */
  timeoutMs: number;
  /** Least bytes per second a download must receive, on average over each `rateWindowMs` from its request on; 0: no floor (`serve --advisory-fetch-min-rate`). */
  minBytesPerSecond: number;
  /** The window of `minBytesPerSecond`, ms. */
  rateWindowMs: number;
  /** Largest archive or index downloaded, bytes (a record: at most 8 MiB). */
  maxBytes: number;
  /** How long a server's hold on a feed lasts unrenewed, ms: another takes the feed over this long after its holder died. */
  leaseMs: number;
}

export const defaultAdvisoryFeedsConfig: AdvisoryFeedsConfig = {
  urls: [],
  intervalMs: 3600_000,
  allowHttp: false,
  allowPrivateAddresses: false,
  timeoutMs: 15 * 60_000,
  minBytesPerSecond: 1024,
  rateWindowMs: 30_000,
  maxBytes: 2 * 1024 ** 3,
  leaseMs: 60_000,
};

/** The configuration's advisory feed settings over the defaults. */
export function advisoryFeedsConfigOf(config: { advisoryFeeds?: Partial<AdvisoryFeedsConfig> }): AdvisoryFeedsConfig {
  return { ...defaultAdvisoryFeedsConfig, ...config.advisoryFeeds };
}

/** The upstream registries pull-through fetches from (README "Pull-through cache"). */
export interface UpstreamRegistriesConfig {
  /** Also plain `http://` upstreams (`serve --allow-http-upstreams`). */
  allowHttp: boolean;
  /** Also upstreams on loopback, private or link-local addresses (`serve --allow-private-upstreams`). */
  allowPrivateAddresses: boolean;
  /** How long an upstream may take to answer a request's headers, and at most between two bytes of a body, ms (`serve --upstream-timeout`): then what is held is served. */
  timeoutMs: number;
}

export const defaultUpstreamRegistriesConfig: UpstreamRegistriesConfig = { allowHttp: false, allowPrivateAddresses: false, timeoutMs: 10_000 };

/** The configuration's upstream registry settings over the defaults. */
export function upstreamRegistriesConfigOf(config: { upstreamRegistries?: Partial<UpstreamRegistriesConfig> }): UpstreamRegistriesConfig {
  return { ...defaultUpstreamRegistriesConfig, ...config.upstreamRegistries };
}

/** How the server applies the registry's retention policies (`serve --retention-interval`). */
export interface RetentionConfig {
  /** How often a pass runs, ms (one replica at a time); 0: never (only `platform-api registry retention`). */
  intervalMs: number;
  /** How long a server's hold on the pass lasts unrenewed, ms: another takes it over this long after its holder died. */
  leaseMs: number;
}

export const defaultRetentionConfig: RetentionConfig = { intervalMs: 3600_000, leaseMs: 60_000 };

/** The configuration's retention settings over the defaults. */
export function retentionConfigOf(config: { retention?: Partial<RetentionConfig> }): RetentionConfig {
  return { ...defaultRetentionConfig, ...config.retention };
}

/**
 * The threads that scan images for their vulnerability reports (docs/operations.md, "Vulnerability
 * reports"): decompressing and walking layers, parsing package databases, lockfiles and SBOMs, off
 * the event loop that serves both hosts.
 */
export interface ScanConfig {
  /** Worker threads scans run on (`serve --scan-threads`); also the images scanned at once. */
  threads: number;
  /** Each thread's JS heap, bytes, a whole number of MiB (`--scan-thread-memory`): a scan that needs more fails, and its thread is replaced. */
  threadMemoryBytes: number;
  /** CPU time a scan may spend on one layer, or on an image's package files and SBOMs, ms (`--scan-cpu-budget`): then it fails, and its thread is replaced. */
  cpuBudgetMs: number;
}

export const defaultScanConfig: ScanConfig = { threads: 2, threadMemoryBytes: 512 * 1024 ** 2, cpuBudgetMs: 120_000 };

/** The configuration's scan settings over the defaults. */
export function scanConfigOf(config: { scan?: Partial<ScanConfig> }): ScanConfig {
  return { ...defaultScanConfig, ...config.scan };
}

/** Blob GETs redirected to a presigned URL of the bucket (docs/operations.md, "Blobs straight from the bucket"). */
export interface BlobRedirectConfig {
  /** How long a presigned URL is good for, seconds (`serve --registry-storage-redirect-ttl`, default 20m as in distribution). */
  expiresInSeconds: number;
}
