import { toJson } from "@bufbuild/protobuf";
import type { Transaction } from "kysely";
import { RepoSchema } from "../../../gen/platform/registry/v2/repo_pb.js";
import type { Database } from "../../store/tables.js";
import { repoFromRow } from "../registry/repo-mapper.js";
import type { RepoRow } from "../registry/store/repos.js";
import { apiEventType, emitEvent } from "./store/outbox.js";

/**
 * Records a repo the registry host created (a first push, `registry import`):
 * `<prefix>.api.platform.registry.repo.created.v1`, the Repo as body, in the transaction that
 * inserted it. CreateRepo's event comes from the RPC.
 */
export async function recordRepoCreated(trx: Transaction<Database>, repo: RepoRow, options: { now: number; typePrefix: string; via: string }): Promise<void> {
  await emitEvent(
    trx,
    {
      type: apiEventType(options.typePrefix, "platform.registry.repo.created"),
      subject: repo.uid,
      group: repo.group_uid,
      actor: { subject: "", act: { via: options.via } },
      body: toJson(RepoSchema, repoFromRow(repo)),
      bodyType: RepoSchema.typeName,
    },
    options.now,
  );
}

/** What a manifest push stored (hosted-api 8, `registry.push.v1`). */
export interface Push {
  /** `<organization>/<repo name>`. */
  repository: string;
  repo: RepoRow;
  /** The tag pushed, or empty for a push by digest. */
  tag: string;
  digest: string;
  mediaType: string;
}

/**
 * Records a manifest push: `<prefix>.registry.push.v1` (the hosted service's registry event,
 * outside `.api.`), about the repo, with the hosted body's fields (`repository`, `repo_id`,
 * `tag`, `digest`, `type`, `mediatype`, `method`, `when`), in the push's transaction.
 */
export async function recordPush(trx: Transaction<Database>, push: Push, options: { now: number; typePrefix: string }): Promise<void> {
  await emitEvent(
    trx,
    {
      type: `${options.typePrefix}.registry.push.v1`,
      subject: push.repo.uid,
      group: push.repo.group_uid,
      actor: { subject: "", act: { via: "registry push" } },
      body: {
        repository: push.repository,
        repo_id: push.repo.uid,
        ...(push.tag === "" ? {} : { tag: push.tag }),
        digest: push.digest,
        type: "manifest",
        mediatype: push.mediaType,
        method: "PUT",
        when: new Date(options.now).toISOString(),
      },
    },
    options.now,
  );
}
