import { parseRepositoryName, type Repository, type RepositoryName } from "../../domains/registry/index.js";
import { handleBlob, handleBlobDelete, handleUpload, handleUploadStart } from "./blob-endpoints.js";
import { referenceName, type RegistryContext, type RegistryNote, type RegistryRequest, type RegistryResponse } from "./context.js";
import { handleManifestDelete, handleManifestGet, handleManifestPut, handleReferrers, handleTagsList } from "./manifest-endpoints.js";
import { authorizeRepository, mountSourceScope, type RepositoryAccess } from "./registry-auth.js";
import { RegistryFailure } from "./registry-errors.js";
import type { RepositoryCall } from "./repository-call.js";
import { DELETE, PULL, PUSH, type Action } from "./scope.js";
import { handleTagHistory, matchHistoryPath } from "./tag-history-endpoint.js";

/** One method of a repository route: the action it needs, the change it makes (if any), and its endpoint. */
interface RepositoryMethod {
  /** The action it needs; of a list, any one (the first is the one its challenge names). */
  action: Action | readonly Action[];
  /** Another scope the request needs, named in its challenge beside the action's (a mount's source). */
  alsoChallenge?: (query: URLSearchParams) => string | undefined;
  /** The change the request makes, noted before it is authorized (so a refusal is recorded too). */
  change?: (name: RepositoryName, rest: string[], query: URLSearchParams) => RegistryNote["change"];
  answer: (ctx: RegistryContext, req: RegistryRequest, res: RegistryResponse, call: RepositoryCall, rest: string[], query: URLSearchParams) => Promise<void>;
}

/** A route on a repository: its name (for logs and metrics), what it matches of a path (the repository name, then the rest), its methods. */
interface RepositoryRoute {
  name: string;
  match: (path: string) => { name: string; rest: string[] } | undefined;
  methods: Record<string, RepositoryMethod>;
}

/** Matches `pattern` (the name first, the rest after it). The name may hold `/`, so each pattern anchors on what follows it. */
const matching = (pattern: RegExp) => (path: string) => {
  const m = pattern.exec(path);
  return m === null ? undefined : { name: m[1], rest: m.slice(2) };
};

const pull = (answer: RepositoryMethod["answer"]): RepositoryMethod => ({ action: PULL, answer });

/** `/v2/<name>/...` routes, Tag History first (its separator is no part of a name). */
export const REPOSITORY_ROUTES: RepositoryRoute[] = [
  {
    name: "tag_history",
    match: (path) => {
      const found = matchHistoryPath(path);
      return found === undefined ? undefined : { name: found.name, rest: [found.tag] };
    },
    methods: Object.fromEntries(["GET", "HEAD"].map((verb) => [verb, pull((c, q, s, call, [tag], p) => handleTagHistory(c, q, s, call, tag, p))])),
  },
  {
    name: "manifest",
    match: matching(/^\/v2\/(.+)\/manifests\/([^/]+)$/),
    methods: {
      GET: pull((c, q, s, call, [reference]) => handleManifestGet(c, q, s, call, reference)),
      HEAD: pull((c, q, s, call, [reference]) => handleManifestGet(c, q, s, call, reference)),
      PUT: {
        action: PUSH,
        change: (name, [reference]) => ({ action: "registry.manifest.put", resource: referenceName(name.full, reference) }),
        answer: (c, q, s, call, [reference]) => handleManifestPut(c, q, s, call, reference),
      },
      DELETE: {
        action: DELETE,
        change: (name, [reference]) => {
          const resource = referenceName(name.full, reference);
          return { action: resource.includes("@") ? "registry.manifest.delete" : "registry.tag.delete", resource };
        },
        answer: (c, q, s, call, [reference]) => handleManifestDelete(c, q, s, call, reference),
      },
    },
  },
  {
    name: "upload_start",
    match: matching(/^\/v2\/(.+)\/blobs\/uploads\/?$/),
    methods: {
      POST: {
        action: PUSH,
        alsoChallenge: (query) => {
          const from = query.get("mount") === null ? null : query.get("from");
          return from === null ? undefined : mountSourceScope(from);
        },
        change: (name, _, query) => {
          const [mount, digest] = [query.get("mount"), query.get("digest")];
          if (mount !== null) return { action: "registry.blob.mount", resource: referenceName(name.full, mount) };
          if (digest !== null) return { action: "registry.blob.upload", resource: referenceName(name.full, digest) };
          return undefined;
        },
        answer: (c, q, s, call, _, p) => handleUploadStart(c, q, s, call, p),
      },
    },
  },
  {
    name: "upload",
    match: matching(/^\/v2\/(.+)\/blobs\/uploads\/([^/]+)$/),
    methods: Object.fromEntries(
      ["GET", "PATCH", "PUT", "DELETE"].map((verb): [string, RepositoryMethod] => [
        verb,
        {
          // An upload's status needs no more than clients ask for it with (pull; the upload's id is its secret), and
          // cancelling it push or delete (clients hold either for a DELETE on the repository).
          action: verb === "GET" ? PULL : verb === "DELETE" ? [PUSH, DELETE] : PUSH,
          change: verb === "PUT" ? (name, _, query) => ({ action: "registry.blob.upload", resource: referenceName(name.full, query.get("digest") ?? "") }) : undefined,
          answer: (c, q, s, call, [id], p) => handleUpload(c, q, s, call, id, p),
        },
      ]),
    ),
  },
  {
    name: "blob",
    match: matching(/^\/v2\/(.+)\/blobs\/([^/]+)$/),
    methods: {
      ...Object.fromEntries(["GET", "HEAD"].map((verb) => [verb, pull((c, q, s, call, [digest]) => handleBlob(c, q, s, call, digest))])),
      DELETE: {
        action: DELETE,
        change: (name, [digest]) => ({ action: "registry.blob.delete", resource: referenceName(name.full, digest) }),
        answer: (c, q, s, call, [digest]) => handleBlobDelete(c, q, s, call, digest),
      },
    },
  },
  { name: "tags_list", match: matching(/^\/v2\/(.+)\/tags\/list$/), methods: { GET: pull((c, q, s, call, _, p) => handleTagsList(c, q, s, call, p)) } },
  {
    name: "referrers",
    match: matching(/^\/v2\/(.+)\/referrers\/([^/]+)$/),
    methods: { GET: pull((c, q, s, call, [digest], p) => handleReferrers(c, q, s, call, digest, p)) },
  },
];

/** `authorizeRepository` for the first of `actions` the request may do; the first's refusal when it may do none. */
async function authorizeAnyOf(ctx: RegistryContext, req: RegistryRequest, repo: Repository, actions: readonly Action[], alsoChallenge?: string): Promise<RepositoryAccess> {
  let refusal: unknown;
  for (const action of actions) {
    try {
      return await authorizeRepository(ctx, req, repo, action, alsoChallenge);
    } catch (error) {
      if (!(error instanceof RegistryFailure) || error.error.status !== 403) throw error;
      refusal ??= error;
    }
  }
  throw refusal;
}

/**
 * The step every repository route passes before its endpoint: parses the name (400 NAME_INVALID),
 * notes the change the method makes, authorizes the method's action (401, 403, or 404 as
 * `authorizeRepository` answers) and hands the endpoint the repository's handle, whose row the
 * authorization and the endpoint share (read once, when first needed; a push creates it).
 */
export async function answerOnRepository(
  ctx: RegistryContext,
  req: RegistryRequest,
  res: RegistryResponse,
  method: RepositoryMethod,
  matched: { name: string; rest: string[] },
  query: URLSearchParams,
): Promise<void> {
  const name = parseRepositoryName(matched.name);
  const change = method.change?.(name, matched.rest, query);
  if (change !== undefined) ctx.note.change = change;
  const repo = ctx.repository(name);
  const access = await authorizeAnyOf(ctx, req, repo, typeof method.action === "string" ? [method.action] : method.action, method.alsoChallenge?.(query));
  await method.answer(ctx, req, res, { repo, access }, matched.rest, query);
}
