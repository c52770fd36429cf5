import { immutablePatternOf } from "./immutable-tags.js";

/**
 * Retention: which tags and untagged manifests of a repo its policy removes (the rules are stated
 * on `RetentionPolicy` in proto/platform/registry/v2/retention_policy.proto). `planRetention` is the
 * whole rule, a pure function of the repo's rows; `retention-pass.ts` reads the rows and applies it.
 */

/** A policy's rules. */
export interface RetentionRules {
  /** 0: no count rule. */
  keepLast: number;
  keepTags: readonly string[];
  /** ms; 0: no age rule. */
  expireAfterMs: number;
  /** ms; 0: no untagged manifest goes. */
  untaggedGraceMs: number;
}

/** What the plan reads of a repo. */
export interface RetentionInput {
  /** `active_time`: when the tag last changed (moved, re-created, deprecated) or a push set it, moved or not, epoch ms. */
  tags: ReadonlyArray<{ uid: string; name: string; digest: string; active_time: number }>;
  manifests: ReadonlyArray<{ digest: string; create_time: number; subject_digest: string }>;
  /** Index → manifest it names. */
  refs: ReadonlyArray<{ parent_digest: string; child_digest: string }>;
  /** The repo's immutable tag patterns: their tags always stay. */
  immutableTags: readonly string[];
}

/** What goes: tags (by name, as read) and untagged manifests (by digest), each in name or digest order. */
export interface RetentionPlan<Tag> {
  deleteTags: Tag[];
  deleteManifests: string[];
  keptTags: number;
}

/** The tags and untagged manifests `rules` remove from a repo at time `now`. */
export function planRetention<Tag extends RetentionInput["tags"][number]>(
  rules: RetentionRules,
  input: Omit<RetentionInput, "tags"> & { tags: readonly Tag[] },
  now: number,
): RetentionPlan<Tag> {
  const deleteTags = tagsToDelete(rules, input.tags, input.immutableTags, now);
  const gone = new Set(deleteTags.map((t) => t.name));
  const staying = input.tags.filter((t) => !gone.has(t.name));
  const deleteManifests = rules.untaggedGraceMs > 0 ? manifestsToDelete(input, staying, now - rules.untaggedGraceMs) : [];
  return { deleteTags, deleteManifests, keptTags: staying.length };
}

function tagsToDelete<Tag extends RetentionInput["tags"][number]>(rules: RetentionRules, tags: readonly Tag[], immutable: readonly string[], now: number): Tag[] {
  if (rules.keepLast === 0 && rules.expireAfterMs === 0) return [];
  const pinned = (tag: Tag) => immutablePatternOf(rules.keepTags, tag.name) !== undefined || immutablePatternOf(immutable, tag.name) !== undefined;
  // The most recently active first, ties by name: the first `keepLast` of the tags no pattern keeps stay.
  const ranked = tags.filter((t) => !pinned(t)).sort((a, b) => b.active_time - a.active_time || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const expireBefore = rules.expireAfterMs === 0 ? Number.POSITIVE_INFINITY : now - rules.expireAfterMs;
  return ranked
    .filter((tag, rank) => rank >= rules.keepLast && tag.active_time < expireBefore)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * The manifests pushed before `pushedBefore` that nothing keeps. Kept: what a staying tag points
 * at, what was pushed since, what a kept index names, the subject of a kept manifest and the
 * referrers of one.
 */
function manifestsToDelete(input: Omit<RetentionInput, "tags">, staying: RetentionInput["tags"], pushedBefore: number): string[] {
  const held = new Set(input.manifests.map((m) => m.digest));
  const links = new Map<string, string[]>();
  const link = (from: string, to: string) => {
    if (!held.has(to)) return;
    const list = links.get(from);
    if (list) list.push(to);
    else links.set(from, [to]);
  };
  for (const ref of input.refs) link(ref.parent_digest, ref.child_digest);
  for (const m of input.manifests) {
    if (m.subject_digest === "") continue;
    link(m.digest, m.subject_digest);
    link(m.subject_digest, m.digest);
  }
  const kept = new Set<string>();
  // Roots: what staying tags point at, and what is too recent to go (an index pushed by digest keeps its images).
  const pending = [...staying.map((t) => t.digest).filter((d) => held.has(d)), ...input.manifests.filter((m) => m.create_time >= pushedBefore).map((m) => m.digest)];
  for (let digest = pending.pop(); digest !== undefined; digest = pending.pop()) {
    if (kept.has(digest)) continue;
    kept.add(digest);
    for (const next of links.get(digest) ?? []) if (!kept.has(next)) pending.push(next);
  }
  return input.manifests
    .filter((m) => !kept.has(m.digest))
    .map((m) => m.digest)
    .sort();
}
