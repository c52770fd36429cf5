import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import SqliteDatabase from "better-sqlite3";
import { sql, type Kysely } from "kysely";
import { GroupsService } from "../../gen/platform/iam/v2/groups_service_pb.js";
import { ReposService } from "../../gen/platform/registry/v2/repos_service_pb.js";
import { TagsService } from "../../gen/platform/registry/v2/tags_service_pb.js";
import type { Database } from "../../src/domains/kit/schema.js";
import { methodOf, type Outcome, type Wire } from "./wires.js";

/**
 * A concurrent write load whose every acknowledged write is recorded, and the
 * checks that a database kept all of them: what the crash and shutdown tests of
 * test/reliability/ share.
 */

/** The moves of one tag by one writer, in the order they were sent. */
export interface TagLog {
  repoUid: string;
  name: string;
  /** Digests in sending order; each is sent once. */
  sent: string[];
  /** Index in `sent` of the newest acknowledged move, or -1. */
  lastAcked: number;
  acked: number;
}

/** A call that did not succeed. */
export interface Failure {
  wire: string;
  kind: "group" | "repo" | "tag";
  /** The group or repo name, or the tag's digest, the call would have written. */
  wrote: string;
  code: number;
  message: string;
  httpStatus?: number;
  /** Whether the server answered (an HTTP status, or error details), rather than the connection failing. */
  answered: boolean;
  /** Date.now() when the call started, and when its outcome arrived. */
  startedAt: number;
  at: number;
}

export interface Ledger {
  /** Acknowledged groups, uid to name. */
  groups: Map<string, string>;
  /** Acknowledged repos, uid to name. */
  repos: Map<string, string>;
  tags: TagLog[];
  failures: Failure[];
  /** Calls started (acknowledged or not). */
  attempts: number;
}

export function newLedger(): Ledger {
  return { groups: new Map(), repos: new Map(), tags: [], failures: [], attempts: 0 };
}

let serial = 0;
const digestOf = (text: string) => `sha256:${createHash("sha256").update(text).digest("hex")}`;

/** One call through `wire`; a transport failure (refused, reset) is an outcome too, with code -1. */
async function attempt(wire: Wire, ...args: Parameters<Wire["call"]>): Promise<Outcome> {
  try {
    return await wire.call(...args);
  } catch (error) {
    if (error instanceof assert.AssertionError) throw error;
    return { code: -1, message: String(error), details: [] };
  }
}

/**
 * Writes through `wire` until `stop()` says so: CreateGroup and CreateRepo
 * under `orgUid`, and (every other call) CreateTag moving `tag` (this writer's
 * own) to a fresh digest. One call at a time; records each acknowledged write in `ledger`.
 */
export async function runWriter(options: { wire: Wire; token: string; orgUid: string; tag: TagLog; ledger: Ledger; stop: () => boolean }): Promise<void> {
  const { wire, token, orgUid, tag, ledger } = options;
  let failed = false;
  while (!options.stop()) {
    // After a failure (the server is going away), do not spin on refused connections.
    if (failed) await new Promise((resolve) => setTimeout(resolve, 5));
    const failures = ledger.failures.length;
    const startedAt = Date.now();
    const n = ++serial;
    // Half of the calls move the tag: the write of two tables in one transaction.
    const pick = Math.min(n % 4, 2);
    ledger.attempts++;
    if (pick === 0) {
      const name = `g-${process.pid}-${n}`;
      const out = await attempt(
        wire,
        methodOf(GroupsService, "CreateGroup"),
        { parent: orgUid, group: { name } },
        { method: "POST", path: `/iam/v2/groups/${orgUid}`, body: { name } },
        token,
      );
      if (out.code === 0) ledger.groups.set(out.body!.uid as string, name);
      else ledger.failures.push(failure(wire, "group", name, startedAt, out));
    } else if (pick === 1) {
      const name = `r-${process.pid}-${n}`;
      const out = await attempt(
        wire,
        methodOf(ReposService, "CreateRepo"),
        { parent: orgUid, repo: { name } },
        { method: "POST", path: `/registry/v2/repos/${orgUid}`, body: { name } },
        token,
      );
      if (out.code === 0) ledger.repos.set(out.body!.uid as string, name);
      else ledger.failures.push(failure(wire, "repo", name, startedAt, out));
    } else {
      const digest = digestOf(`${tag.name}-${n}`);
      const index = tag.sent.push(digest) - 1;
      const out = await attempt(
        wire,
        methodOf(TagsService, "CreateTag"),
        { parent: tag.repoUid, tag: { name: tag.name, digest } },
        { method: "POST", path: `/registry/v2/tags/${tag.repoUid}`, body: { name: tag.name, digest } },
        token,
      );
      if (out.code === 0) {
        assert.equal(out.body!.digest, digest);
        tag.lastAcked = index;
        tag.acked++;
      } else {
        ledger.failures.push(failure(wire, "tag", digest, startedAt, out));
      }
    }
    failed = ledger.failures.length > failures;
  }
}

function failure(wire: Wire, kind: Failure["kind"], wrote: string, startedAt: number, out: Outcome): Failure {
  const answered = out.httpStatus !== undefined || out.details.length > 0;
  return { wire: wire.name, kind, wrote, code: out.code, message: out.message ?? "", httpStatus: out.httpStatus, answered, startedAt, at: Date.now() };
}

/**
 * Opens the SQLite file (its server must have stopped) and checks, failing
 * with the first difference:
 * - `PRAGMA integrity_check` is ok and `PRAGMA foreign_key_check` finds nothing;
 * - every acknowledged group and repo is there under its name;
 * - each writer's tag points to its newest acknowledged digest or to one sent
 *   after it (a move in flight when the server stopped may have landed), and its
 *   history lists, in sending order, only digests that were sent, including
 *   every acknowledged one, ending with the tag's digest;
 * - every tag in the file equals the newest record of its history;
 * - with `failedWroteNothing` (a clean shutdown, not a crash), no failed call
 *   left its group, repo or tag move: each tag is exactly at its newest
 *   acknowledged digest, with one history record per acknowledged move.
 */
export function verifyDatabase(
  file: string,
  ledger: Ledger,
  options: { failedWroteNothing?: boolean } = {},
): { groups: number; repos: number; tags: number; history: number } {
  const db = new SqliteDatabase(file);
  try {
    assert.deepEqual(db.pragma("integrity_check"), [{ integrity_check: "ok" }], "PRAGMA integrity_check");
    assert.deepEqual(db.pragma("foreign_key_check"), [], "PRAGMA foreign_key_check");

    const nameOf = (table: "groups" | "repos", uid: string) =>
      (db.prepare(`select name from ${table} where uid = ?`).get(uid) as { name: string } | undefined)?.name;
    for (const [uid, name] of ledger.groups) assert.equal(nameOf("groups", uid), name, `acknowledged group ${uid} (${name})`);
    for (const [uid, name] of ledger.repos) assert.equal(nameOf("repos", uid), name, `acknowledged repo ${uid} (${name})`);

    const tagRow = db.prepare("select digest from tags where repo_uid = ? and name = ?");
    const historyOf = db.prepare("select digest from tag_history where repo_uid = ? and tag_name = ? order by seq");
    for (const tag of ledger.tags) {
      const row = tagRow.get(tag.repoUid, tag.name) as { digest: string } | undefined;
      const history = (historyOf.all(tag.repoUid, tag.name) as Array<{ digest: string }>).map((r) => r.digest);
      checkAcknowledgedTag(tag, row, history);
    }

    if (options.failedWroteNothing) {
      const written = {
        group: db.prepare("select count(*) as n from groups where name = ?"),
        repo: db.prepare("select count(*) as n from repos where name = ?"),
        tag: db.prepare("select count(*) as n from tag_history where digest = ?"),
      };
      for (const f of ledger.failures) {
        assert.equal((written[f.kind].get(f.wrote) as { n: number }).n, 0, `a failed call left its ${f.kind} ${f.wrote} (${f.wire}: ${f.message})`);
      }
      for (const tag of ledger.tags) {
        const history = historyOf.all(tag.repoUid, tag.name) as Array<{ digest: string }>;
        assert.equal(history.length, tag.acked, `history of ${tag.name}: one record per acknowledged move`);
        if (tag.lastAcked >= 0) assert.equal((tagRow.get(tag.repoUid, tag.name) as { digest: string }).digest, tag.sent[tag.lastAcked]);
      }
    }

    const disagreeing = db
      .prepare(
        `select t.repo_uid, t.name from tags t
         where t.digest is not (select h.digest from tag_history h where h.repo_uid = t.repo_uid and h.tag_name = t.name order by h.seq desc limit 1)`,
      )
      .all();
    assert.deepEqual(disagreeing, [], "tags whose newest history record differs");
    const count = (table: string) => (db.prepare(`select count(*) as n from ${table}`).get() as { n: number }).n;
    return { groups: count("groups"), repos: count("repos"), tags: count("tags"), history: count("tag_history") };
  } finally {
    db.close();
  }
}

/**
 * `verifyDatabase`'s checks of acknowledged writes (not the SQLite pragmas, not `failedWroteNothing`)
 * through a store of either dialect, for a crash on PostgreSQL: every acknowledged group and repo is
 * there, each tag is at its newest acknowledged move or a later one sent, its history lists sent
 * digests in sending order, every acknowledged one included, and ends at the tag.
 */
export async function verifyStore(db: Kysely<Database>, ledger: Ledger): Promise<void> {
  const names = async (table: "groups" | "repos", uids: string[]) => {
    const found = new Map<string, string>();
    for (let i = 0; i < uids.length; i += 500) {
      const rows = await db.selectFrom(table).select(["uid", "name"]).where("uid", "in", uids.slice(i, i + 500)).execute();
      for (const row of rows) found.set(row.uid, row.name);
    }
    return found;
  };
  const groups = await names("groups", [...ledger.groups.keys()]);
  for (const [uid, name] of ledger.groups) assert.equal(groups.get(uid), name, `acknowledged group ${uid} (${name})`);
  const repos = await names("repos", [...ledger.repos.keys()]);
  for (const [uid, name] of ledger.repos) assert.equal(repos.get(uid), name, `acknowledged repo ${uid} (${name})`);
  for (const tag of ledger.tags) {
    const row = await db.selectFrom("tags").select("digest").where("repo_uid", "=", tag.repoUid).where("name", "=", tag.name).executeTakeFirst();
    const history = (
      await db.selectFrom("tag_history").select("digest").where("repo_uid", "=", tag.repoUid).where("tag_name", "=", tag.name).orderBy("seq").execute()
    ).map((r) => r.digest);
    checkAcknowledgedTag(tag, row, history);
  }
  const disagreeing = await sql<{ repo_uid: string; name: string }>`
    select t.repo_uid, t.name from tags t
    where t.digest is distinct from (select h.digest from tag_history h where h.repo_uid = t.repo_uid and h.tag_name = t.name order by h.seq desc limit 1)`.execute(db);
  assert.deepEqual(disagreeing.rows, [], "tags whose newest history record differs");
}

/**
 * The store kept tag `tag`'s acknowledged moves: it points at the last acknowledged digest or a
 * later one sent, its history holds sent digests in the order sent, at least one per
 * acknowledged move, ending at the tag. A tag never acknowledged may be absent or at any sent digest.
 */
function checkAcknowledgedTag(tag: TagLog, row: { digest: string } | undefined, history: string[]): void {
  if (tag.lastAcked < 0) {
    assert.ok(row === undefined || tag.sent.includes(row.digest), `tag ${tag.name} points to a digest never sent`);
    return;
  }
  assert.ok(row, `tag ${tag.name} had acknowledged moves but is gone`);
  const at = tag.sent.indexOf(row.digest);
  assert.ok(at >= tag.lastAcked, `tag ${tag.name} is at move ${at}, older than the acknowledged move ${tag.lastAcked}`);
  const positions = history.map((d) => tag.sent.indexOf(d));
  assert.ok(positions.every((p, i) => p >= 0 && (i === 0 || p > positions[i - 1])), `history of ${tag.name} out of order or unknown: ${positions.join(",")}`);
  assert.ok(history.length >= tag.acked, `history of ${tag.name}: ${history.length} records, ${tag.acked} acknowledged moves`);
  assert.equal(history.at(-1), row.digest, `tag ${tag.name} differs from the newest record of its history`);
}
