import { ApiError, permissionDenied, unauthenticated } from "../../aip/errors.js";
import type { Violations } from "../../aip/validation.js";
import type { Principal } from "../../access/principal.js";
import type { Db } from "../kit/schema.js";
import { getRepo, type RepoRow } from "./store/repos.js";

/**
 * Immutable tags: a repo's tag patterns (`Repo.immutable_tags`) whose tags, once created, never
 * point at another digest and are never deleted. The rule is `refuseImmutableTagChange`, called
 * by the store functions that move or delete tags (`store/tags.ts`, `store/manifests.ts`) in the
 * transaction that changes them, after the tag rows are locked or already changed: a refusal rolls
 * the whole change back, so no concurrent change can slip between the check and the write.
 */

/** The most patterns a repo holds. */
export const MAX_IMMUTABLE_PATTERNS = 32;
/** A pattern: 1 to 128 characters of the tag alphabet, plus `*`. */
const PATTERN = /^[A-Za-z0-9_.*-]{1,128}$/;

/** The error's ErrorInfo reason and PreconditionFailure violation type. */
export const TAG_IMMUTABLE = "TAG_IMMUTABLE";

/** Adds a violation for each pattern that breaks the syntax, for too many, and for repeats. */
export function checkImmutableTags(violations: Violations, patterns: readonly string[], field = "repo.immutable_tags"): void {
  if (patterns.length > MAX_IMMUTABLE_PATTERNS) violations.add(field, `must hold at most ${MAX_IMMUTABLE_PATTERNS} patterns`);
  const seen = new Set<string>();
  patterns.forEach((pattern, i) => {
    if (!PATTERN.test(pattern)) violations.add(`${field}[${i}]`, "must be 1 to 128 characters among A-Z a-z 0-9 _ . - and * (any run of characters)");
    else if (seen.has(pattern)) violations.add(`${field}[${i}]`, `repeats the pattern "${pattern}"`);
    seen.add(pattern);
  });
}

/** What removing a pattern needs on the repo's group, besides `CAP_REPO_UPDATE`. */
export const UNLOCK_CAPABILITY = "CAP_REGISTRY_IMMUTABLE_TAGS_UNLOCK";

/**
 * Lifting immutable tags: a change of a repo's patterns from `before` to `after` that removes one
 * (every pattern of `before` not in `after`, whatever `after` adds) frees the tags it protected,
 * so the caller must also hold UNLOCK_CAPABILITY on the repo's group `group`. Throws
 * PERMISSION_DENIED naming the patterns removed when it does not; adding patterns needs nothing more.
 */
export function requireUnlock(caller: Principal | undefined, group: string, before: readonly string[], after: readonly string[]): void {
  const kept = new Set(after);
  const removed = before.filter((pattern) => !kept.has(pattern));
  if (removed.length === 0) return;
  if (!caller) throw unauthenticated("this call needs `Authorization: Bearer <token>`");
  if (caller.grants.has(group, [UNLOCK_CAPABILITY])) return;
  throw permissionDenied(`removing the immutable tag patterns ${removed.map((p) => `"${p}"`).join(", ")} needs ${UNLOCK_CAPABILITY} on ${group}`);
}

/** The patterns as the `repos.immutable_tags` column stores them. */
export function immutableTagsColumn(patterns: readonly string[]): string {
  return JSON.stringify(patterns);
}

/** The patterns a `repos.immutable_tags` column holds. */
export function immutableTagsOf(row: Pick<RepoRow, "immutable_tags">): string[] {
  return JSON.parse(row.immutable_tags) as string[];
}

/** True when `tag` matches `pattern`: `*` matches any run of characters (none included), every other character itself. */
export function matchesTagPattern(pattern: string, tag: string): boolean {
  const parts = pattern.split("*");
  if (parts.length === 1) return pattern === tag;
  const first = parts[0];
  const last = parts[parts.length - 1];
  if (tag.length < first.length + last.length || !tag.startsWith(first) || !tag.endsWith(last)) return false;
  let at = first.length;
  const end = tag.length - last.length;
  for (const middle of parts.slice(1, -1)) {
    const found = tag.indexOf(middle, at);
    if (found < 0 || found + middle.length > end) return false;
    at = found + middle.length;
  }
  return true;
}

/** The first of `patterns` that `tag` matches, or undefined. */
export function immutablePatternOf(patterns: readonly string[], tag: string): string | undefined {
  return patterns.find((pattern) => matchesTagPattern(pattern, tag));
}

/** What was about to happen to an immutable tag. */
export type ImmutableTagChange = { kind: "move"; digest: string } | { kind: "delete" } | { kind: "delete-manifest"; digest: string };

/**
 * A change refused because a tag matches an immutable pattern of its repo: FAILED_PRECONDITION
 * with ErrorInfo reason `TAG_IMMUTABLE` (metadata `tag`, `pattern`) and a PreconditionFailure of
 * that type on the tag's uid. The registry host answers it 403 `DENIED` with `description`.
 */
export class TagImmutableError extends ApiError {
  constructor(
    readonly tag: string,
    readonly pattern: string,
    readonly description: string,
    tagUid: string,
  ) {
    super("FAILED_PRECONDITION", `Precondition failed: ${description}`, TAG_IMMUTABLE, [], [{ type: TAG_IMMUTABLE, subject: tagUid, description }], undefined, { tag, pattern });
    this.name = "TagImmutableError";
  }
}

/**
 * The immutable-tag rule. Throws TagImmutableError when one of `tags` (rows of the repo
 * `repoUid`, as they were before `change`) matches an immutable pattern of the repo, unless the
 * change leaves it where it is (a move to the digest it already has). Call it in the transaction
 * that changes the tags, after their rows are locked (a move) or deleted (a delete): the throw
 * then undoes the change. Reads the repo's patterns in that transaction.
 */
export async function refuseImmutableTagChange(db: Db, repoUid: string, tags: ReadonlyArray<{ uid: string; name: string; digest: string }>, change: ImmutableTagChange): Promise<void> {
  const moving = change.kind === "move" ? tags.filter((tag) => tag.digest !== change.digest) : tags;
  if (moving.length === 0) return;
  const patterns = immutableTagsOf(await getRepo(db, repoUid));
  if (patterns.length === 0) return;
  for (const tag of moving) {
    const pattern = immutablePatternOf(patterns, tag.name);
    if (pattern === undefined) continue;
    const which = `tag ${tag.name} matches the immutable tag pattern "${pattern}" of its repo`;
    const description =
      change.kind === "move"
        ? `${which}: it points at ${tag.digest} and cannot move to ${change.digest}`
        : change.kind === "delete"
          ? `${which}: it cannot be deleted`
          : `${which} and points at ${change.digest}: the manifest cannot be deleted`;
    throw new TagImmutableError(tag.name, pattern, description, tag.uid);
  }
}
