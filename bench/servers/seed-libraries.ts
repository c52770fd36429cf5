import { fileURLToPath } from "node:url";
import type { Kysely } from "kysely";
import { importLibraries } from "../../src/domains/libraries/library-import.js";
import { readLibraryFeed } from "../../src/engines/package-feeds/feed.js";
import type { LibraryPackage } from "../../src/engines/package-feeds/library-package.js";
import type { Database } from "../../src/domains/kit/schema.js";

/**
 * The library figure's data: the npm, PyPI and Maven metadata shipped in test/fixtures/libraries
 * (64 packages), read once with the importer's own reader, and ARTIFACT_COUNT artifacts derived
 * from them: copy `k` of a package is named `<name>-<k in base 36>` (the first copy keeps the real
 * name) and keeps its three highest versions. The ListArtifacts figure searches QUERY among them.
 */

const FIXTURES = fileURLToPath(new URL("../../test/fixtures/libraries", import.meta.url));

/** Artifacts of the organization's index (BENCH_ARTIFACTS, default 100,000). */
export const ARTIFACT_COUNT = Number(process.env.BENCH_ARTIFACTS ?? 100_000);

/**
 * The ListArtifacts figure's `query`: the start of a family of derived names (`minimist-z`,
 * `minimist-z0` ... `minimist-zz`: 37 of 100,000), as a search for one library finds a handful.
 */
export const QUERY = "minimist-z";
export const QUERY_ECOSYSTEMS = ["ECOSYSTEM_JAVASCRIPT", "ECOSYSTEM_PYTHON", "ECOSYSTEM_JAVA"];

/**
 * Fills organization `org`'s index with ARTIFACT_COUNT artifacts through the importer; returns how
 * many there are and how many of them QUERY finds. Throws unless every one was added.
 */
export async function seedLibraries(db: Kysely<Database>, org: string) {
  const shipped: LibraryPackage[] = [];
  for await (const entry of readLibraryFeed(["npm", "pypi", "maven"].map((f) => `${FIXTURES}/${f}`))) {
    if (!entry.item) throw new Error(`the shipped fixture ${entry.source} was refused: ${entry.error?.message}`);
    shipped.push(entry.item);
  }
  let matching = 0;
  async function* derived() {
    for (let i = 0; i < ARTIFACT_COUNT; i++) {
      const base = shipped[i % shipped.length];
      const copy = Math.floor(i / shipped.length);
      const name = copy === 0 ? base.name : `${base.name}-${copy.toString(36)}`;
      if (name.toLowerCase().includes(QUERY)) matching++;
      yield { item: { ...base, name, versions: base.versions.slice(-3) } };
    }
  }
  const start = performance.now();
  const counts = await importLibraries(db, org, derived());
  if (counts.added !== ARTIFACT_COUNT) throw new Error(`seeding ${ARTIFACT_COUNT} artifacts: ${JSON.stringify(counts)}`);
  return { artifacts: ARTIFACT_COUNT, query: QUERY, matching, seedMs: performance.now() - start };
}
