import { flag, storeOptions, UsageError } from "../../command/options.js";
import type { DomainCommand } from "../deps.js";

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
      return await runImportCommand("records", (hooks) => importOsvFeed(store.db, entries(), { strict, ...hooks }), (e): e is InstanceType<typeof StrictImportError> => e instanceof StrictImportError);
    } catch (error) {
      if (error instanceof OsvFeedError) throw new UsageError(error.message);
      throw error;
    } finally {
      await store.close();
    }
  },
};

/** The vulnerabilities domain's commands of `platform-api`. */
export const vulnerabilitiesCommands: Record<string, DomainCommand> = { "advisories import": advisoriesImport };
