import { CommandError, flag, parseDuration, storeOptions, UsageError, type OptionSpec, type Options } from "../../command/options.js";
import type { BlobRedirectConfig } from "../../config.js";
import type { DomainCommand } from "../kit/deps.js";
import type { ContentStore } from "./content/content-store.js";
import { UPLOAD_LIFETIME_MS } from "./upload-lifetime.js";

// Each command imports what it runs with when it runs: its help answers without loading the registry.

/** Where the registry keeps blobs and uploads: the options of `serve` and of the registry's commands. */
export const contentStoreOptions = {
  "registry-dir": { type: "string", env: "REGISTRY_DIR", default: "./data/registry", help: "folder of the registry's blob content and uploads" },
  "registry-storage": {
    type: "string",
    env: "REGISTRY_STORAGE",
    help: "s3://<bucket>[/<prefix>]: keep blobs and uploads in an S3-compatible store instead of --registry-dir (credentials, region and endpoint from the AWS_* variables)",
  },
} as const satisfies Record<string, OptionSpec>;

/**
 * The content store of `--registry-storage s3://...` or of the folder `--registry-dir`. With
 * `checked`, an S3 bucket must answer first (a server fails at start, not at its first push).
 */
export async function contentStoreOf(options: Options, checked = false): Promise<ContentStore> {
  const [{ openContentStore }, { InvalidStorageUrl }] = await Promise.all([import("./content/open-content-store.js"), import("./content/s3-location.js")]);
  try {
    return await openContentStore({ storage: options["registry-storage"] as string | undefined, dir: options["registry-dir"] as string, checked });
  } catch (error) {
    if (error instanceof InvalidStorageUrl) throw new UsageError(`--registry-storage: ${error.message}`);
    throw error;
  }
}

/** Blob GETs redirected to the bucket: options of `serve` only. */
export const blobRedirectOptions = {
  "registry-storage-redirect": {
    type: "boolean",
    env: "REGISTRY_STORAGE_REDIRECT",
    help: "answer blob GETs with a redirect to a presigned URL of the --registry-storage bucket, so clients download from it (they must reach its endpoint)",
  },
  "registry-storage-redirect-ttl": { type: "string", env: "REGISTRY_STORAGE_REDIRECT_TTL", default: "20m", help: "how long a presigned URL of --registry-storage-redirect is good for, 1s to 7d" },
} as const satisfies Record<string, OptionSpec>;

/** SigV4's longest presigned URL: 7 days. */
const MAX_REDIRECT_SECONDS = 7 * 86400;

/**
 * `--registry-storage-redirect` and its TTL; undefined when it is off. Throws UsageError when
 * it is on without an S3 `--registry-storage` (a folder's blobs have no URL of their own), or
 * for a TTL that is not a duration from 1s to 7d.
 */
export function blobRedirectOf(options: Options): BlobRedirectConfig | undefined {
  if (!flag("registry-storage-redirect", options)) return undefined;
  if (!options["registry-storage"]) throw new UsageError("--registry-storage-redirect needs --registry-storage s3://<bucket>[/<prefix>]: blobs in --registry-dir have no URL to redirect to");
  let expiresInSeconds: number;
  try {
    expiresInSeconds = parseDuration(options["registry-storage-redirect-ttl"] as string);
  } catch (error) {
    throw new UsageError(`--registry-storage-redirect-ttl: ${(error as Error).message}`);
  }
  if (expiresInSeconds < 1 || expiresInSeconds > MAX_REDIRECT_SECONDS) throw new UsageError("--registry-storage-redirect-ttl must be from 1s to 7d (the longest a presigned URL lives)");
  return { expiresInSeconds };
}

const registryImport: DomainCommand = {
  summary: "load image manifests into a repo from OCI image layouts or manifest files",
  description:
    "Load image manifests into a repo, from OCI image layout directories or manifest JSON files (paths after the options),\n" +
    "and point tags at them; all of it is stored or none. Blobs are copied without being held in memory; a terminal\n" +
    "shows the progress. Prints what was stored as JSON.",
  options: {
    repo: { type: "string", help: "<organization>/<repo name>; created under the organization (or --group) when missing (required)" },
    tag: { type: "string", help: "tag to point at the single top-level manifest (default: the layout's ref names)" },
    group: { type: "string", help: "uid of the group that holds the repo when it is created" },
    db: storeOptions.db,
    ...contentStoreOptions,
  },
  operands: "<path>...",
  async run({ options, operands, context }) {
    if (!options.repo) throw new UsageError("--repo is required");
    if (operands.length === 0) throw new UsageError("give at least one OCI layout directory or manifest file");
    const [{ importImages }, { byteProgressLine }] = await Promise.all([import("./import.js"), import("../../command/progress.js")]);
    const content = await contentStoreOf(options);
    const store = await context.openStore(options.db as string);
    const progress = byteProgressLine(process.stderr);
    try {
      const result = await importImages(store, {
        repository: options.repo as string,
        paths: operands,
        tag: options.tag as string | undefined,
        group: options.group as string | undefined,
        now: Date.now(),
        content,
        onProgress: progress.update,
      });
      progress.clear();
      process.stdout.write(`${JSON.stringify(result)}\n`);
    } finally {
      progress.clear();
      await store.close();
    }
  },
};

const registryGc: DomainCommand = {
  summary: "remove abandoned uploads and the blobs no manifest names (safe while serving)",
  description:
    `Remove uploads not finished within ${UPLOAD_LIFETIME_MS / 3600_000}h of their start, then the blobs (rows and files) that no manifest names\n` +
    "and that no push has uploaded, mounted or referenced within --grace. Safe beside a running server on the same\n" +
    "database and --registry-dir. Prints {uploads, blobs, bytes, recent} as JSON (recent: unnamed blobs kept for their grace).",
  options: {
    grace: { type: "string", default: "24h", help: "keep blobs a push used within this long, e.g. 90m (protects pushes in progress)" },
    db: storeOptions.db,
    ...contentStoreOptions,
  },
  async run({ options, context }) {
    let graceSeconds: number;
    try {
      graceSeconds = parseDuration(options.grace as string);
    } catch (error) {
      throw new UsageError(`--grace: ${(error as Error).message}`);
    }
    const { collectGarbage } = await import("./gc.js");
    const content = await contentStoreOf(options);
    const store = await context.openStore(options.db as string);
    try {
      const result = await collectGarbage(store.db, content, { now: Date.now(), graceMs: graceSeconds * 1000 });
      process.stdout.write(`${JSON.stringify(result)}\n`);
    } finally {
      await store.close();
    }
  },
};

const registryRetention: DomainCommand = {
  summary: "apply the repos' retention policies now, or list what they would remove (--dry-run)",
  description:
    "Apply every repo's retention policy once (RetentionPolicy in the API: keep the last N tags, tags matching patterns,\n" +
    "tags updated recently; remove untagged manifests after a grace), as the server does every --retention-interval.\n" +
    "Safe beside running servers on the same database: it takes the same lease, and refuses while a server holds it.\n" +
    "With --dry-run it removes nothing and lists what would go. Prints {dryRun, repos: [{repository, repoUid, policyUid,\n" +
    "deletedTags, deletedManifests, keptTags}], tags, manifests} as JSON. Run `registry gc` after it to free the blobs.",
  options: {
    "dry-run": { type: "boolean", help: "list what would be removed; remove nothing" },
    repo: { type: "string", help: "only this repo, <organization>/<repo name>" },
    db: storeOptions.db,
  },
  async run({ options, context }) {
    const [{ runRetentionPass }, { leasedRetentionPass }, { defaultEventsConfig, defaultRetentionConfig }, { findRepoByPath }, { parseRepositoryName }, { leaseHolder }] = await Promise.all([
      import("./retention-pass.js"),
      import("./retention-worker.js"),
      import("../../config.js"),
      import("./store/repos.js"),
      import("./names.js"),
      import("../kit/jobs.js"),
    ]);
    const store = await context.openStore(options.db as string);
    try {
      let repoUid: string | undefined;
      if (options.repo !== undefined) {
        const name = (() => {
          try {
            return parseRepositoryName(options.repo as string);
          } catch (error) {
            throw new UsageError(`--repo: ${(error as Error).message}`);
          }
        })();
        const repo = await findRepoByPath(store.db, name.organization, name.image);
        if (!repo) throw new CommandError(`no repo ${name.full}`);
        repoUid = repo.uid;
      }
      const typePrefix = defaultEventsConfig.typePrefix;
      const dryRun = options["dry-run"] === true;
      const repos = dryRun
        ? await runRetentionPass(store.db, { now: Date.now(), typePrefix, dryRun, repoUid })
        : await leasedRetentionPass(store.db, { holder: `cli:${leaseHolder()}`, config: defaultRetentionConfig, typePrefix, force: true, repoUid });
      if (repos === undefined) throw new CommandError("a server is applying retention now (it holds the lease); try again when its pass ends");
      const count = (key: "deletedTags" | "deletedManifests") => repos.reduce((n, r) => n + r[key].length, 0);
      process.stdout.write(`${JSON.stringify({ dryRun, repos, tags: count("deletedTags"), manifests: count("deletedManifests") })}\n`);
    } finally {
      await store.close();
    }
  },
};

/** The registry's commands of `platform-api`. */
export const registryCommands: Record<string, DomainCommand> = { "registry import": registryImport, "registry gc": registryGc, "registry retention": registryRetention };

