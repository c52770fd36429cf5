import { flag, listOption, parseByteSize, parseDuration, storeOptions, UsageError, type OptionSpec, type Options } from "../../command/options.js";
import type { AdvisoryFeedsConfig } from "../../config.js";
import type { DomainCommand } from "../kit/deps.js";

// Each command imports what it runs with when it runs: its help answers without loading the domain.

const advisoriesImport: DomainCommand = {
  summary: "load OSV advisory records from .json files, directories or .zip archives",
  description:
    "Load OSV records (https://ossf.github.io/osv-schema/) from .json files, directories of them and .zip archives\n" +
    "(osv.dev's per-ecosystem all.zip). A record with a later `modified` replaces the stored one; the same feed twice\n" +
    "changes nothing. Refused records are reported on stderr with their file and JSON path and skipped.\n" +
    "Prints `read N, new N, updated N, unchanged N, rejected N`.",
  options: {
    strict: { type: "boolean", help: "stop at the first refused record (exit 1); by default it is reported and skipped" },
    db: storeOptions.db,
  },
  operands: "<file | directory | .zip>...",
  async run({ options, operands, context }) {
    if (operands.length === 0) throw new UsageError("give at least one OSV .json file, directory or .zip archive");
    const strict = flag("strict", options);
    const [{ readOsvFeed }, { OsvFeedError }, { importOsvFeed, StrictImportError }, { runImportCommand }] = await Promise.all([
      import("../../engines/advisories/osv/feed.js"),
      import("../../engines/advisories/osv/errors.js"),
      import("./osv-import.js"),
      import("../../command/progress.js"),
    ]);
    const store = await context.openStore(options.db as string);
    try {
      const feed = readOsvFeed(operands);
      // The first step checks every path: a mistyped one fails here, before anything is written.
      const first = await feed.next();
      async function* entries() {
        if (first.done) return;
        yield first.value;
        yield* feed;
      }
      return await runImportCommand("records", (hooks) => importOsvFeed(store.db, entries(), { strict, reactions: context.reactions, ...hooks }), (e): e is InstanceType<typeof StrictImportError> => e instanceof StrictImportError);
    } catch (error) {
      if (error instanceof OsvFeedError) throw new UsageError(error.message);
      throw error;
    } finally {
      await store.close();
    }
  },
};

/** Who may be fetched as a feed, and how slowly: `serve` and `advisories sync` take the same flags and environment variables. */
const feedPolicyOptions: Record<string, OptionSpec> = {
  "allow-http-feeds": { type: "boolean", env: "ALLOW_HTTP_FEEDS", help: "let advisory feeds be plain http URLs (default: https only)" },
  "allow-private-feeds": { type: "boolean", env: "ALLOW_PRIVATE_FEEDS", help: "let advisory feeds be on loopback, private or link-local addresses (default: public addresses only)" },
  "advisory-fetch-timeout": {
    type: "string",
    env: "ADVISORY_FETCH_TIMEOUT",
    default: "15m",
    help: "longest one feed download (an archive, an index or one record) may take, connect to last byte (90s, 15m, 1h)",
  },
  "advisory-fetch-min-rate": {
    type: "string",
    env: "ADVISORY_FETCH_MIN_RATE",
    default: "1KiB",
    help: "least bytes per second a feed download must receive, on average over each 30 s from its request on (512, 4KiB; 0: no floor)",
  },
};
const FEED_HELP = "URL of an OSV archive (.zip, e.g. osv.dev's <ecosystem>/all.zip) or of a folder holding modified_id.csv and <id>.json records (osv.dev's layout); repeatable";

/** `serve`'s advisory feed options. */
export const advisoryFeedOptions: Record<string, OptionSpec> = {
  "advisory-feed": { type: "string", multiple: true, env: "ADVISORY_FEEDS", help: `${FEED_HELP}; kept current in the background` },
  "advisory-sync-interval": { type: "string", env: "ADVISORY_SYNC_INTERVAL", default: "1h", help: "how often each advisory feed is fetched (a conditional GET); also the longest retry backoff (90s, 15m, 1h)" },
  ...feedPolicyOptions,
};

/** `--advisory-fetch-timeout` (at least 1 s) and `--advisory-fetch-min-rate` (0: none), in ms and bytes per second; throws UsageError. */
function fetchBoundsOf(options: Options): Pick<AdvisoryFeedsConfig, "timeoutMs" | "minBytesPerSecond"> {
  let timeoutMs: number;
  let minBytesPerSecond: number;
  try {
    timeoutMs = parseDuration(options["advisory-fetch-timeout"] as string) * 1000;
    if (timeoutMs < 1000) throw new Error("must be at least 1s");
  } catch (error) {
    throw new UsageError(`--advisory-fetch-timeout: ${(error as Error).message}`);
  }
  try {
    minBytesPerSecond = parseByteSize(options["advisory-fetch-min-rate"] as string);
  } catch (error) {
    throw new UsageError(`--advisory-fetch-min-rate: ${(error as Error).message}`);
  }
  return { timeoutMs, minBytesPerSecond };
}

/**
 * The feeds of `option` and the policy flags, checked as far as a URL can be before anything is
 * fetched: http(s) only, plain http and IP literals that are not public only when the flags allow
 * (a host name is checked again by the addresses it resolves to, at each connection); and each
 * download's deadline and rate floor. Throws UsageError.
 */
export async function advisoryFeedsOf(option: string, options: Options): Promise<Pick<AdvisoryFeedsConfig, "urls" | "allowHttp" | "allowPrivateAddresses" | "timeoutMs" | "minBytesPerSecond">> {
  const [{ checkOutboundUrl }, { feedPolicy }, { defaultAdvisoryFeedsConfig }] = await Promise.all([import("../../outbound/fetch.js"), import("./feed-worker.js"), import("../../config.js")]);
  const allowHttp = flag("allow-http-feeds", options);
  const allowPrivateAddresses = flag("allow-private-feeds", options);
  const urls = [...new Set(listOption(option, options))];
  const policy = feedPolicy({ ...defaultAdvisoryFeedsConfig, allowHttp, allowPrivateAddresses });
  for (const text of urls) {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw new UsageError(`--${option}: "${text}" is not a URL`);
    }
    try {
      checkOutboundUrl(url, policy);
    } catch (error) {
      throw new UsageError(`--${option}: ${(error as Error).message}`);
    }
  }
  return { urls, allowHttp, allowPrivateAddresses, ...fetchBoundsOf(options) };
}

const advisoriesSync: DomainCommand = {
  summary: "fetch advisory feeds once and import what changed (what serve --advisory-feed does every interval)",
  description:
    "Fetch each feed once, whether due or not, and import what changed, as `serve --advisory-feed` does in the background:\n" +
    "a conditional GET (ETag, Last-Modified) with the validators of the last sync, so an unchanged feed is a 304 and\n" +
    "reads nothing; an archive is downloaded whole and verified before anything is written. The feeds are fetched at\n" +
    "once, each download within --advisory-fetch-timeout and above --advisory-fetch-min-rate. A feed a server is syncing\n" +
    "right now is skipped. Prints one line per feed as it ends: `<url>: read N, new N, updated N, unchanged N, rejected N`,\n" +
    "`<url>: not modified` or `<url>: skipped (...)`; a failed feed is reported on stderr (exit 1).",
  options: {
    feed: { type: "string", multiple: true, env: "ADVISORY_FEEDS", help: `${FEED_HELP} (default: the feeds of ADVISORY_FEEDS, as serve's)` },
    ...feedPolicyOptions,
    db: storeOptions.db,
  },
  async run({ options, context }) {
    const feeds = await advisoryFeedsOf("feed", options);
    if (feeds.urls.length === 0) throw new UsageError("give at least one --feed (or set ADVISORY_FEEDS)");
    const [{ syncAdvisoryFeed }, { feedPolicy }, { removeStaleDownloads }, { defaultAdvisoryFeedsConfig }, { formatCounts }, { leaseHolder }] = await Promise.all([
      import("./feed-sync.js"),
      import("./feed-worker.js"),
      import("./feed-downloads.js"),
      import("../../config.js"),
      import("../../store/batched-import.js"),
      import("../kit/jobs.js"),
    ]);
    const config = { ...defaultAdvisoryFeedsConfig, ...feeds };
    try {
      for (const dir of await removeStaleDownloads()) process.stderr.write(`platform-api: removed ${dir}, the download of a feed sync that did not end\n`);
    } catch (error) {
      process.stderr.write(`platform-api: could not look for stale feed downloads: ${(error as Error).message}\n`);
    }
    const store = await context.openStore(options.db as string);
    let failed = 0;
    try {
      const holder = leaseHolder();
      const sync = async (url: string) => {
        const report = await syncAdvisoryFeed(store.db, url, {
          policy: feedPolicy(config),
          holder,
          leaseMs: config.leaseMs,
          intervalMs: config.intervalMs,
          force: true,
          onRejected: (error) => process.stderr.write(`rejected ${error.message}\n`),
          reactions: context.reactions,
        });
        if (report.result === "imported") process.stdout.write(`${url}: ${formatCounts(report.counts)}\n`);
        else if (report.result === "not-modified") process.stdout.write(`${url}: not modified\n`);
        else if (report.result === "skipped") process.stdout.write(`${url}: skipped (another process is syncing it)\n`);
        else {
          failed++;
          process.stderr.write(`platform-api: ${url}: ${report.error}; nothing of it was written\n`);
        }
      };
      await Promise.all(feeds.urls.map(sync));
    } finally {
      await store.close();
    }
    return failed > 0 ? 1 : 0;
  },
};

/** The vulnerabilities domain's commands of `platform-api`. */
export const vulnerabilitiesCommands: Record<string, DomainCommand> = { "advisories import": advisoriesImport, "advisories sync": advisoriesSync };
