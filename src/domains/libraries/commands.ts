import { flag, storeOptions, UsageError } from "../../command/options.js";
import type { DomainCommand } from "../kit/deps.js";
import type { Db } from "../kit/schema.js";

// Each command imports what it runs with when it runs: its help answers without loading the domain.

/** The organization an import goes to, by uid or name. */
async function organizationOf(db: Db, org: string): Promise<string> {
  const [{ isUidp }, { findOrganizationByName, isOrganization }] = await Promise.all([import("../../aip/uidp.js"), import("../iam/index.js")]);
  if (isUidp(org)) {
    if (await isOrganization(db, org)) return org;
    throw new UsageError(`--org ${org}: no such organization (a root group)`);
  }
  const found = await findOrganizationByName(db, org);
  if (!found) throw new UsageError(`--org ${org}: no organization has this name`);
  return found.uid;
}

const librariesImport: DomainCommand = {
  summary: "load an organization's library index from npm, PyPI and Maven metadata",
  description:
    "Load an organization's library index from the ecosystems' own metadata: npm package documents (the registry's\n" +
    "`GET /<package>` or `npm view <package> --json`), PyPI JSON API documents (`/pypi/<project>/json`), Python\n" +
    "distributions (wheels, .tar.gz sdists, or their core metadata: `<file>.metadata`, METADATA, PKG-INFO; the\n" +
    "versions of one project are gathered over the import), and Maven repositories (`maven-metadata*.xml` with the\n" +
    "POMs of the repository layout beside them), as files or folders of them. Changed metadata replaces the stored\n" +
    "artifact; the same metadata twice changes nothing. Refused files are reported on stderr and skipped.\n" +
    "Prints `read N, new N, updated N, unchanged N, rejected N` (artifacts, and refused files).",
  options: {
    org: { type: "string", help: "the organization (uid or name) whose library index receives the artifacts (required)" },
    strict: { type: "boolean", help: "stop at the first refused document (exit 1); by default it is reported and skipped" },
    db: storeOptions.db,
  },
  operands: "<file | directory>...",
  async run({ options, operands, context }) {
    const org = options.org;
    if (typeof org !== "string" || org === "") throw new UsageError("--org is required: the organization (uid or name) whose index receives the artifacts");
    if (operands.length === 0) throw new UsageError("give at least one metadata file or folder of them");
    const strict = flag("strict", options);
    const [{ LibraryFeedError, readLibraryFeed }, { importLibraries }, { StrictImportError }, { runImportCommand }] = await Promise.all([
      import("../../engines/package-feeds/feed.js"),
      import("./library-import.js"),
      import("../../store/batched-import.js"),
      import("../../command/progress.js"),
    ]);
    const store = await context.openStore(options.db as string);
    try {
      const orgUid = await organizationOf(store.db, org);
      const feed = readLibraryFeed(operands);
      // The first step checks every path: a missing one fails here, before anything is written.
      const first = await feed.next();
      async function* entries() {
        if (first.done) return;
        yield first.value;
        yield* feed;
      }
      return await runImportCommand("documents", (hooks) => importLibraries(store.db, orgUid, entries(), { strict, ...hooks }), (e): e is InstanceType<typeof StrictImportError> => e instanceof StrictImportError);
    } catch (error) {
      if (error instanceof LibraryFeedError) throw new UsageError(error.message);
      throw error;
    } finally {
      await store.close();
    }
  },
};

/** The libraries domain's commands of `platform-api`. */
export const librariesCommands: Record<string, DomainCommand> = { "libraries import": librariesImport };
