import type { Kysely } from "kysely";
import type { Database } from "../kit/schema.js";
import { inTransaction } from "../../store/transaction.js";
import { RegistryError } from "./errors.js";
import { checkDigest, checkTag, isDigestReference, type RepositoryName } from "./names.js";
import { deleteManifest } from "./store/manifests.js";
import type { RepoRow } from "./store/repos.js";
import { deleteTagByName, findTagByName, findTagsByDigest } from "./store/tags.js";
import { recordTagDeletions } from "./tag-moves.js";

/**
 * Deletes what `reference` names in the repo, in one transaction with each deleted tag's
 * `tag.deleted` event: a digest deletes the manifest and the tags pointing at it, a
 * tag deletes the tag. Tag history stays. Throws DIGEST_INVALID, TAG_INVALID, or MANIFEST_UNKNOWN
 * when there is no such manifest or tag.
 */
export async function deleteReference(
  db: Kysely<Database>,
  repo: RepoRow,
  name: RepositoryName,
  reference: string,
  options: { now: number; typePrefix: string; actor?: string },
): Promise<void> {
  const events = { now: options.now, typePrefix: options.typePrefix, via: "registry delete", actor: options.actor };
  await inTransaction(db, undefined, async (trx) => {
    if (isDigestReference(reference)) {
      const digest = checkDigest(reference);
      const tags = await findTagsByDigest(trx, repo.uid, digest);
      if (!(await deleteManifest(trx, repo.uid, digest))) throw new RegistryError("MANIFEST_UNKNOWN", `${name.full} holds no manifest ${digest}`, { digest });
      await recordTagDeletions(trx, repo, tags, events);
    } else {
      const tag = await findTagByName(trx, repo.uid, checkTag(reference));
      if (tag === undefined || !(await deleteTagByName(trx, repo.uid, tag.name))) throw new RegistryError("MANIFEST_UNKNOWN", `${name.full} has no tag ${reference}`, { tag: reference });
      await recordTagDeletions(trx, repo, [tag], events);
    }
  });
}
