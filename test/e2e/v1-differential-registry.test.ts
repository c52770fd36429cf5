import { Registry } from "../../gen/platform/registry/v1/registry_pb.js";
import { ReposService } from "../../gen/platform/registry/v2/repos_service_pb.js";
import { TagsService } from "../../gen/platform/registry/v2/tags_service_pb.js";
import { defined, describeDifferentialOnEveryDatabase, rest, type DifferentialKind } from "../support/v1-differential.js";

/**
 * Registry through v1 and v2 on the same store: repos and tags, on every wire and on SQLite and
 * PostgreSQL (test/support/v1-differential.ts). Advisories and library artifacts are read-only
 * imports (no v1 or v2 write), so they have no differential kind; their tests compare v1 with v2.
 */

const digest = (n: number) => `sha256:${n.toString(16).padStart(64, "0")}`;
const unique = () => Math.random().toString(16).slice(2, 10);

const REGISTRY_KINDS: DifferentialKind[] = [
  {
    name: "repo",
    setup: async (_h, group) => ({ parent: group, name: `diff/repo-${unique()}` }),
    v1: {
      create: ({ parent, name }) => {
        const repo = { name, description: "the app" };
        return { service: Registry, method: "CreateRepo", request: { parentId: parent, repo }, rest: rest("POST", `/registry/v1/repos/${parent}`, repo) };
      },
      // PUT without `description` (and readme): it is reset.
      update: ({ name }, created) => {
        const body = { id: created.id as string, name: `${name}-renamed` };
        return { service: Registry, method: "UpdateRepo", request: body, rest: rest("PUT", `/registry/v1/repos/${body.id}`, body) };
      },
      list: (id) => ({ service: Registry, method: "ListRepos", request: { id }, rest: rest("GET", `/registry/v1/repos?id=${id}`) }),
      delete: (id) => ({ service: Registry, method: "DeleteRepo", request: { id }, rest: rest("DELETE", `/registry/v1/repos/${id}`) }),
    },
    v2: {
      create: ({ parent, name }) => {
        const repo = { name, description: "the app" };
        return { service: ReposService, method: "CreateRepo", request: { parent, repo }, rest: rest("POST", `/registry/v2/repos/${parent}`, repo) };
      },
      update: (_s, created) => {
        const repo = { uid: created.uid as string, description: "changed" };
        return { service: ReposService, method: "UpdateRepo", request: { repo }, rest: rest("PATCH", `/registry/v2/repos/${repo.uid}`, repo) };
      },
      get: (uid) => ({ service: ReposService, method: "GetRepo", request: { uid }, rest: rest("GET", `/registry/v2/repos/${uid}`) }),
      delete: (uid) => ({ service: ReposService, method: "DeleteRepo", request: { uid }, rest: rest("DELETE", `/registry/v2/repos/${uid}`) }),
    },
    toV1: (r) => defined({ id: r.uid, name: r.name, createTime: r.createTime, description: r.description }),
  },
  {
    name: "tag",
    setup: async (h, group) => {
      const repo = { name: `diff/tags-${unique()}` };
      const made = await h.ok({ service: ReposService, method: "CreateRepo", request: { parent: group, repo }, rest: rest("POST", `/registry/v2/repos/${group}`, repo) });
      return { parent: made.uid as string };
    },
    v1: {
      create: ({ parent }) => {
        const tag = { name: "v1", digest: digest(1), deprecated: true };
        return { service: Registry, method: "CreateTag", request: { repoId: parent, tag }, rest: rest("POST", `/registry/v1/tags/${parent}`, tag) };
      },
      // PUT to another digest without `deprecated`: it is reset.
      update: (_s, created) => {
        const body = { id: created.id as string, name: "v1", digest: digest(2) };
        return { service: Registry, method: "UpdateTag", request: body, rest: rest("PUT", `/registry/v1/tags/${body.id}`, body) };
      },
      list: (id) => ({ service: Registry, method: "ListTags", request: { id }, rest: rest("GET", `/registry/v1/tags?id=${id}`) }),
      delete: (id) => ({ service: Registry, method: "DeleteTag", request: { id }, rest: rest("DELETE", `/registry/v1/tags/${id}`) }),
    },
    v2: {
      create: ({ parent }) => {
        const tag = { name: "v1", digest: digest(1), deprecated: true };
        return { service: TagsService, method: "CreateTag", request: { parent, tag }, rest: rest("POST", `/registry/v2/tags/${parent}`, tag) };
      },
      get: (uid) => ({ service: TagsService, method: "GetTag", request: { uid }, rest: rest("GET", `/registry/v2/tags/${uid}`) }),
      delete: (uid) => ({ service: TagsService, method: "DeleteTag", request: { uid }, rest: rest("DELETE", `/registry/v2/tags/${uid}`) }),
    },
    toV1: (t) => defined({ id: t.uid, name: t.name, digest: t.digest, lastUpdated: t.updateTime, deprecated: t.deprecated }),
  },
];

await describeDifferentialOnEveryDatabase("Registry v1/v2", REGISTRY_KINDS);
