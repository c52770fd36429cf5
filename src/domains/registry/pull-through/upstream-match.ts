import type { Db } from "../../kit/schema.js";
import type { SecretBox } from "../../../store/secret-box.js";
import { findOrganizationByName } from "../../iam/index.js";
import type { RepositoryName } from "../names.js";
import { allUpstreams, patternsOf, type UpstreamRow } from "../store/upstreams.js";
import type { UpstreamTarget } from "./upstream-client.js";

/** The upstream a repository name is pulled through: its row, its client's target, and the name's repository path at the upstream. */
export interface MatchedUpstream {
  row: UpstreamRow;
  target: UpstreamTarget;
  /** `<upstream_prefix><the name below repo_prefix>`. */
  remote: string;
}

/** Whether `value` matches a pattern where `*` stands for any run of characters (and nothing else is special). */
export function matchesPattern(pattern: string, value: string): boolean {
  const source = pattern.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\/-]/g, "\\$&")).join(".*");
  return new RegExp(`^${source}$`).test(value);
}

/** Whether an upstream's include and exclude patterns let the name `rest` (below its prefix) through. */
export function admits(row: Pick<UpstreamRow, "include_repos" | "exclude_repos">, rest: string): boolean {
  const include = patternsOf(row.include_repos);
  if (include.length > 0 && !include.some((p) => matchesPattern(p, rest))) return false;
  return !patternsOf(row.exclude_repos).some((p) => matchesPattern(p, rest));
}

/**
 * The upstream that backs repository `name`: of the name's organization, the one whose
 * `repo_prefix` begins the image name (prefixes of one organization never contain one another),
 * when its patterns admit the rest of the name; undefined otherwise. Its password is opened with
 * `secrets`.
 */
export async function upstreamFor(db: Db, secrets: SecretBox, name: RepositoryName): Promise<MatchedUpstream | undefined> {
  const every = await allUpstreams(db);
  if (every.length === 0) return undefined;
  const organization = await findOrganizationByName(db, name.organization);
  if (organization === undefined) return undefined;
  const rows = every.filter((r) => r.group_uid === organization.uid);
  const row = rows.find((r) => name.image.startsWith(r.repo_prefix) && name.image.length > r.repo_prefix.length);
  if (row === undefined) return undefined;
  const rest = name.image.slice(row.repo_prefix.length);
  if (!admits(row, rest)) return undefined;
  return {
    row,
    target: { uid: row.uid, url: row.url, username: row.username, password: secrets.open(row.password) },
    remote: `${row.upstream_prefix}${rest}`,
  };
}
