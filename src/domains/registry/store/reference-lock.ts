import { createHash } from "node:crypto";
import { sql } from "kysely";
import { dialectOfDb } from "../../../store/dialect.js";
import type { Db } from "../../kit/schema.js";

/**
 * The lock that orders a retention pass and the writers that make a repo's manifests referenced:
 * a tag pointing at one (every tag write), an index naming one, a manifest naming one as its
 * subject (every manifest stored). A writer takes it shared (`shareReferenceLock`) in its
 * transaction before it reads whether what it names exists; a pass takes it exclusively
 * (`takeReferenceLock`) before it reads the repo to plan, and keeps it until it has removed what it
 * planned. So a pass sees every reference committed before it plans, none is added while it removes,
 * and a writer that comes after finds what the pass removed missing (a push is then refused
 * MANIFEST_BLOB_UNKNOWN, or stores the manifest again). Both hold it until their transaction ends.
 *
 * PostgreSQL: a transaction-scoped advisory lock per repo, in the two-key space (this class, a
 * hash of the repo's uid; two repos sharing a hash only wait for each other). Writers do not wait
 * for each other; a pass waits for the writers in progress, and writers that come while it waits
 * queue behind it. SQLite: nothing to take, as every write transaction holds the database's one
 * write lock from its start (`BEGIN IMMEDIATE`).
 */

/** The advisory lock class of repo reference locks (the migration lock is in the one-key space). */
const REFERENCE_LOCK_CLASS = 0x7265_6673;

/** Transactions known to hold a repo's lock shared, by repo uid: a second share of one is not sent. */
const shared = new WeakMap<object, Set<string>>();

function repoKey(repoUid: string): number {
  return createHash("sha256").update(repoUid).digest().readInt32BE(0);
}

/** True when the store has a lock to take (PostgreSQL); throws outside a transaction, where a lock would end at once. */
function hasLockToTake(trx: Db): boolean {
  if (!trx.isTransaction) throw new Error("a repo's reference lock is taken in a transaction");
  return dialectOfDb(trx) === "postgres";
}

/** Takes repo `repoUid`'s reference lock shared, in the caller's transaction (throws outside one). */
export async function shareReferenceLock(trx: Db, repoUid: string): Promise<void> {
  if (!hasLockToTake(trx)) return;
  const held = shared.get(trx) ?? new Set<string>();
  if (held.has(repoUid)) return;
  await sql`select pg_advisory_xact_lock_shared(${sql.lit(REFERENCE_LOCK_CLASS)}, ${repoKey(repoUid)}::integer)`.execute(trx);
  held.add(repoUid);
  shared.set(trx, held);
}

/** Takes repo `repoUid`'s reference lock exclusively, in the caller's transaction (throws outside one): waits for the writers that hold it. */
export async function takeReferenceLock(trx: Db, repoUid: string): Promise<void> {
  if (!hasLockToTake(trx)) return;
  await sql`select pg_advisory_xact_lock(${sql.lit(REFERENCE_LOCK_CLASS)}, ${repoKey(repoUid)}::integer)`.execute(trx);
}
