import { defaultLimits, defaultScanConfig, type Limits, type ScanConfig } from "../config.js";
import { BYTE_UNITS, UsageError, type OptionSpec } from "../command/options.js";

type Unit = "bytes" | "count" | "duration";

/** Each limit of `Limits` as a `serve` option and environment variable (docs/operations.md, Limits). */
const LIMIT_FLAGS: Record<keyof Limits, { flag: string; unit: Unit; help: string }> = {
  maxBodyBytes: { flag: "max-body-bytes", unit: "bytes", help: "largest request body on the API host" },
  maxHeaderBytes: { flag: "max-header-bytes", unit: "bytes", help: "largest request header block, both hosts" },
  maxConcurrentStreams: { flag: "max-concurrent-streams", unit: "count", help: "concurrent streams per HTTP/2 connection" },
  requestTimeoutMs: { flag: "request-timeout", unit: "duration", help: "longest unary call, and time to receive an API request" },
  headersTimeoutMs: { flag: "headers-timeout", unit: "duration", help: "time from a connection's start to its first request headers" },
  idleTimeoutMs: { flag: "idle-timeout", unit: "duration", help: "HTTP/1.1 request with no byte moving either way" },
  keepAliveTimeoutMs: { flag: "keep-alive-timeout", unit: "duration", help: "connection with no request in progress" },
  maxConnections: { flag: "max-connections", unit: "count", help: "open connections per host" },
  maxBlobBytes: { flag: "max-blob-bytes", unit: "bytes", help: "largest blob the registry accepts" },
  registryRequestTimeoutMs: { flag: "registry-request-timeout", unit: "duration", help: "time to receive one registry request (an upload)" },
  lockTimeoutMs: { flag: "lock-timeout", unit: "duration", help: "longest wait of a write for a lock another connection holds (SQLite: the write lock; PostgreSQL: lock_timeout)" },
  upstreamFetchTimeoutMs: { flag: "upstream-fetch-timeout", unit: "duration", help: "one fetch of another issuer's discovery document or keys" },
  upstreamFetchMaxBytes: { flag: "upstream-fetch-max-bytes", unit: "bytes", help: "largest discovery document or key set fetched" },
  maxPendingDeviceLoginsPerClient: { flag: "max-pending-device-logins-per-client", unit: "count", help: "device logins (POST /auth/v1/device/code) waiting for their person at once, per client address" },
  maxPendingDeviceLogins: { flag: "max-pending-device-logins", unit: "count", help: "device logins waiting for their person at once, all clients together" },
};

const envOf = (flag: string) => flag.toUpperCase().replace(/-/g, "_");

/** The `serve` options for every limit, defaults from `defaultLimits`. */
export const limitOptions: Record<string, OptionSpec> = Object.fromEntries(
  Object.entries(LIMIT_FLAGS).map(([key, { flag, unit, help }]) => [
    flag,
    { type: "string", env: envOf(flag), default: formatLimit(defaultLimits[key as keyof Limits], unit), help },
  ]),
);

/** PostgreSQL connection pool size (`serve --db-pool-size`). */
export const poolSizeOption: Record<string, OptionSpec> = {
  "db-pool-size": { type: "string", env: "DB_POOL_SIZE", default: "10", help: "PostgreSQL: connections in the pool" },
};

const MiB = 1024 ** 2;

/** The scan threads of the report worker (`serve --scan-threads`, `--scan-thread-memory`, `--scan-cpu-budget`; docs/operations.md). */
export const scanOptions: Record<string, OptionSpec> = {
  "scan-threads": {
    type: "string",
    env: "SCAN_THREADS",
    default: String(defaultScanConfig.threads),
    help: "threads that scan images for vulnerability reports (layers, package files), off the event loop; also the images scanned at once",
  },
  "scan-thread-memory": {
    type: "string",
    env: "SCAN_THREAD_MEMORY",
    default: formatLimit(defaultScanConfig.threadMemoryBytes, "bytes"),
    help: "JS heap of each scan thread (at least 16MiB); a scan that needs more fails and its thread is replaced",
  },
  "scan-cpu-budget": {
    type: "string",
    env: "SCAN_CPU_BUDGET",
    default: formatLimit(defaultScanConfig.cpuBudgetMs, "duration"),
    help: "CPU time a scan may spend on one layer, or on an image's package files and SBOMs; then it fails and its thread is replaced",
  },
};

/** The scan settings from the parsed options; throws UsageError naming the flag of a value out of bounds. */
export function scanConfigFrom(options: Record<string, string | boolean | undefined>): ScanConfig {
  const memory = parseLimit("scan-thread-memory", String(options["scan-thread-memory"]), "bytes");
  if (memory < 16 * MiB) throw new UsageError("--scan-thread-memory: at least 16MiB");
  return {
    threads: countOf("scan-threads", options),
    threadMemoryBytes: Math.floor(memory / MiB) * MiB,
    cpuBudgetMs: parseLimit("scan-cpu-budget", String(options["scan-cpu-budget"]), "duration"),
  };
}

/** `Limits` from the parsed options; throws UsageError naming the flag of a value that is not a positive amount of its unit. */
export function limitsOf(options: Record<string, string | boolean | undefined>): Limits {
  const limits = { ...defaultLimits };
  for (const [key, { flag, unit }] of Object.entries(LIMIT_FLAGS)) {
    limits[key as keyof Limits] = parseLimit(flag, String(options[flag]), unit);
  }
  return limits;
}

/** A count option (`--db-pool-size`, `--events-concurrency`) as a number from 1 to 1000. */
export function countOf(flag: string, options: Record<string, string | boolean | undefined>): number {
  const count = parseLimit(flag, String(options[flag]), "count");
  if (count > 1000) throw new UsageError(`--${flag}: ${count} is more than 1000`);
  return count;
}

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const FORMS: Record<Unit, string> = {
  bytes: "a size: bytes, or 512KiB, 4MiB, 10GiB",
  count: "a whole number",
  duration: "a duration such as 500ms, 30s, 2m or 1h",
};

/** A positive whole amount: bytes (`4MiB`), a count, or a duration in ms (`30s`). */
function parseLimit(flag: string, text: string, unit: Unit): number {
  const match = /^(\d+)\s*([a-z]*)$/i.exec(text.trim());
  const scale = match && (unit === "bytes" ? BYTE_UNITS : unit === "duration" ? DURATION_UNITS : { "": 1 })[match[2].toLowerCase()];
  const value = match && scale ? Number(match[1]) * scale : NaN;
  if (!Number.isSafeInteger(value)) throw new UsageError(`--${flag}: "${text}" is not ${FORMS[unit]}`);
  if (value < 1) throw new UsageError(`--${flag}: must be more than 0`);
  return value;
}

/** The shortest exact form of a limit, as `parseLimit` reads it. */
function formatLimit(value: number, unit: Unit): string {
  const units = unit === "bytes" ? { GiB: 1024 ** 3, MiB: 1024 ** 2, KiB: 1024 } : unit === "duration" ? { h: 3_600_000, m: 60_000, s: 1000, ms: 1 } : {};
  for (const [name, scale] of Object.entries(units)) if (value % scale === 0) return `${value / scale}${name}`;
  return String(value);
}
