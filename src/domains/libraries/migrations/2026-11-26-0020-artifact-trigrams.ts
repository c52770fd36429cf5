import type { Kysely, Migration } from "kysely";
import { binaryCollation, dialectOfDb } from "../../../store/dialect.js";

/** The distinct 3-character runs (code points) of a lower-case name; frozen with this migration. */
function trigrams(name: string): string[] {
  const chars = Array.from(name);
  const out = new Set<string>();
  for (let i = 0; i + 3 <= chars.length; i++) out.add(chars.slice(i, i + 3).join(""));
  return [...out];
}

/**
 * Frozen: the search index of artifact names, one row per distinct trigram of `name_lower` and
 * artifact (no foreign key: the index is derived data the importer writes with its artifact), and
 * the rows of the artifacts already stored.
 */
export const artifactTrigrams: Migration = {
  async up(db: Kysely<any>) {
    const binary = binaryCollation(dialectOfDb(db));
    await db.schema
      .createTable("artifact_trigrams")
      .addColumn("trigram", "text", (c) => c.notNull().modifyEnd(binary))
      .addColumn("artifact_uid", "text", (c) => c.notNull().modifyEnd(binary))
      .addPrimaryKeyConstraint("artifact_trigrams_pk", ["trigram", "artifact_uid"])
      .execute();
    let after = "";
    for (;;) {
      const rows: Array<{ uid: string; name_lower: string }> = await db.selectFrom("artifacts").select(["uid", "name_lower"]).where("uid", ">", after).orderBy("uid").limit(500).execute();
      if (rows.length === 0) break;
      const values = rows.flatMap((r) => trigrams(r.name_lower).map((trigram) => ({ trigram, artifact_uid: r.uid })));
      for (let i = 0; i < values.length; i += 1000) await db.insertInto("artifact_trigrams").values(values.slice(i, i + 1000)).execute();
      after = rows[rows.length - 1].uid;
    }
  },
};
