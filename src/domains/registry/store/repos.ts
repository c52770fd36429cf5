import { sql, type Insertable, type Selectable } from "kysely";
import { keyTaken, ConflictError, resourceNotEmpty } from "../../../store/errors.js";
import { newChildUid } from "../../../aip/uidp.js";
import { rootOf } from "../../../aip/uidp.js";
import { NAMED_ORDERABLE, namedResourceReads, resourceTable, unlessTaken, updateByUid } from "../../kit/resource-table.js";
import type { TableWith } from "../../kit/domain.js";
import type { Db } from "../../kit/schema.js";
import type { RepoTable } from "../tables.js";
import { getGroup, organizations } from "../../iam/index.js";
import { listConditions } from "../../kit/list-query.js";
import { binaryCollation, dialectOfDb } from "../../../store/dialect.js";
import { CACHEABLE } from "../../../store/cached-reads.js";
import { runPrecompiled } from "../../../store/precompiled.js";

export type RepoRow = Selectable<RepoTable>;

/** Sortable repo fields: API name to column. */
export const repoOrderable = NAMED_ORDERABLE;

const REPOS = resourceTable("repos", "repo", { parent: "group_uid", ownerSegments: 1 });

/** `getRepo` throws NOT_FOUND when the repo does not exist; `listRepos` lists by exact name (`namedResourceReads`). */
export const { get: getRepo, list: listRepos } = namedResourceReads(REPOS);

function taken(name: string) {
  return keyTaken("repo", name, `a repo of this organization is already named "${name}"`);
}

/**
 * Inserts a repo; `org_uid` is derived from `group_uid`. Throws NOT_FOUND when
 * the group does not exist and ALREADY_EXISTS when the name is taken in the organization.
 */
export async function insertRepo(db: Db, row: Omit<Insertable<RepoTable>, "org_uid">): Promise<RepoRow> {
  await getGroup(db, row.group_uid);
  const full: RepoRow = { ...row, immutable_tags: row.immutable_tags ?? "[]", org_uid: rootOf(row.group_uid) };
  await unlessTaken(() => db.insertInto("repos").values(full).execute(), () => taken(row.name));
  return full;
}

/** Writes name, description and (when given) the immutable tag patterns; throws NOT_FOUND or ALREADY_EXISTS (name taken in the organization). */
export function updateRepo(db: Db, uid: string, change: Pick<RepoRow, "name" | "description" | "update_time"> & { immutable_tags?: string }): Promise<RepoRow> {
  return unlessTaken(() => updateByUid(db, REPOS, uid, change), () => taken(change.name));
}

/**
 * Deletes a repo without tags, with its rows in `deletedWithRepo` (every domain's tables
 * whose rows go with their repo: `Ownership`; for the registry the history of its deleted
 * tags, its manifests, blob links and uploads; the blobs stay in the content store).
 * Throws NOT_FOUND, or FAILED_PRECONDITION / RESOURCE_NOT_EMPTY when it has tags.
 */
export async function deleteRepo(db: Db, uid: string, deletedWithRepo: readonly TableWith<"repo_uid">[]): Promise<void> {
  await getRepo(db, uid);
  const tag = await db.selectFrom("tags").select("uid").where("repo_uid", "=", uid).limit(1).executeTakeFirst();
  if (tag) throw resourceNotEmpty("repo", uid);
  for (const table of deletedWithRepo) {
    await db.deleteFrom(table).where("repo_uid", "=", uid).execute();
  }
  await db.deleteFrom("repos").where("uid", "=", uid).execute();
}

/** Replaces the readme; throws NOT_FOUND. */
export function updateReadme(db: Db, uid: string, readme: string, updateTime: number): Promise<RepoRow> {
  return updateByUid(db, REPOS, uid, { readme, update_time: updateTime });
}

/**
 * The repo at registry path `<orgName>/<repoName>`, or undefined: for the
 * registry host, which names repos by path.
 */
export async function findRepoByPath(db: Db, orgName: string, repoName: string): Promise<RepoRow | undefined> {
  const rows = await runPrecompiled(db, "repo by path", [orgName, repoName], (org, repo) =>
    db
      .selectFrom("repos")
      .innerJoin(organizations(db).as("orgs"), "orgs.uid", "repos.org_uid")
      .selectAll("repos")
      .where("orgs.name", "=", org)
      .where("repos.name", "=", repo)
      .modifyEnd(CACHEABLE),
  );
  return rows[0];
}

/**
 * The repo named `image` in organization `organization` (its uid and name), inserted into
 * group `holder` when missing; `created` says which. An insert that loses a race with another
 * one of the same name returns the winner's repo (outside a transaction; inside one the
 * conflict is thrown, as the transaction is then void on PostgreSQL). Throws NOT_FOUND for a
 * missing holder.
 */
export async function findOrInsertRepo(
  db: Db,
  organization: { uid: string; name: string },
  image: string,
  holder: string,
  now: number,
): Promise<{ row: RepoRow; created: boolean }> {
  const existing = await findRepoByPath(db, organization.name, image);
  if (existing !== undefined) return { row: existing, created: false };
  try {
    const row = await insertRepo(db, { uid: newChildUid(holder), group_uid: holder, name: image, description: "", readme: "", create_time: now, update_time: now });
    return { row, created: true };
  } catch (error) {
    const raced = error instanceof ConflictError && !db.isTransaction ? await findRepoByPath(db, organization.name, image) : undefined;
    if (raced === undefined) throw error;
    return { row: raced, created: false };
  }
}

/**
 * Registry paths `<organization>/<repo name>` of the repos in the `visible` subtrees (each
 * root and everything below it), in byte order, after `after` when given, at most `limit`.
 * The visibility narrows the query before it runs.
 */
export async function listRepoPaths(db: Db, visible: string[], options: { after?: string; limit: number }): Promise<string[]> {
  if (visible.length === 0 || options.limit <= 0) return [];
  const path = sql<string>`(${sql.ref("orgs.name")} || '/' || ${sql.ref("repos.name")}) ${binaryCollation(dialectOfDb(db))}`;
  let query = db
    .selectFrom("repos")
    .innerJoin(organizations(db).as("orgs"), "orgs.uid", "repos.org_uid")
    .select(path.as("path"))
    .where((eb) => eb.and(listConditions(eb, { uid: "repos.uid", ownerSegments: 1 }, {}, visible)));
  if (options.after !== undefined) query = query.where(path, ">", options.after);
  const rows = await query.orderBy(path).limit(options.limit).execute();
  return rows.map((row) => row.path);
}
