import type { DescMessage, MessageShape } from "@bufbuild/protobuf";
import type { Transaction } from "kysely";
import { RepoSchema } from "../../../gen/platform/registry/v2/repo_pb.js";
import type { Database } from "../kit/schema.js";
import { apiEventType, emitEvent, eventBody } from "../events/index.js";
import { repoFromRow } from "./repo-mapper.js";
import type { RepoRow } from "./store/repos.js";

/**
 * The events of the registry's own changes (pushes, imports, deletions through the registry host), in
 * the transaction of the change, as the RPCs making the same changes record theirs.
 */

/** How the registry host and `registry import` name themselves in an event's actor. */
export interface HostEventOptions {
  now: number;
  typePrefix: string;
  via: string;
  /** Who made the change: the caller's identity uid on the registry host; "" for the operator's commands. */
  actor?: string;
}

/**
 * Records a change the registry host made to an API resource, as the RPC making it would:
 * `<prefix>.api.<name>.v1`, about `subject` in `group`, the resource message as body (`eventBody`)
 * with its type, the actor naming the path (`act.via`), in the change's transaction.
 */
export async function recordHostChange<Desc extends DescMessage>(
  trx: Transaction<Database>,
  change: { name: string; subject: string; group: string; schema: Desc; message: MessageShape<Desc> },
  options: HostEventOptions,
): Promise<void> {
  await emitEvent(
    trx,
    {
      type: apiEventType(options.typePrefix, change.name),
      subject: change.subject,
      group: change.group,
      actor: { subject: options.actor ?? "", act: { via: options.via } },
      body: eventBody(change.schema, change.message),
      bodyType: change.schema.typeName,
    },
    options.now,
  );
}

/**
 * Records a repo the registry host created (a first push, `registry import`):
 * `<prefix>.api.platform.registry.repo.created.v1`, the Repo as body, in the transaction that
 * inserted it. CreateRepo's event comes from the RPC.
 */
export async function recordRepoCreated(trx: Transaction<Database>, repo: RepoRow, options: HostEventOptions): Promise<void> {
  await recordHostChange(
    trx,
    { name: "platform.registry.repo.created", subject: repo.uid, group: repo.group_uid, schema: RepoSchema, message: repoFromRow(repo) },
    options,
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
export async function recordPush(trx: Transaction<Database>, push: Push, options: { now: number; typePrefix: string; actor?: string }): Promise<void> {
  await emitEvent(
    trx,
    {
      type: `${options.typePrefix}.registry.push.v1`,
      subject: push.repo.uid,
      group: push.repo.group_uid,
      actor: { subject: options.actor ?? "", act: { via: "registry push" } },
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
