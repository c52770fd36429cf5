import type { DescFile, DescService } from "@bufbuild/protobuf";
import type { ConnectRouter, ServiceImpl } from "@connectrpc/connect";
import type { Migration } from "kysely";
import type { DomainCommand, ServiceDeps } from "./deps.js";
import type { JobStart } from "./jobs.js";
import type { Reactions } from "./reactions.js";

/** Tables that have column `C`. */
import type { TableWith } from "./deps.js";

export type { TableWith };

/** A service descriptor bound to the factory of its implementation. */
export interface ServiceBinding {
  service: DescService;
  register(router: ConnectRouter, deps: ServiceDeps): void;
}

/** Binds `service` to `create`, type-checked against the service's methods. */
export function bind<S extends DescService>(service: S, create: (deps: ServiceDeps) => ServiceImpl<S>): ServiceBinding {
  return { service, register: (router, deps) => router.service(service, create(deps)) };
}

/**
 * One domain of the API (docs/adding-a-domain.md): everything the hosts, the store and the
 * tests need to know of it, declared once. `src/server/domains.ts` lists every domain. `S` is
 * what its jobs are started with beside the database and the logger (its settings, its stores).
 */
export interface Domain<S extends object = object> {
  /** The first segment of its REST paths and of its proto package (`iam`, `registry`). */
  name: string;
  /** Proto files whose services it serves: registered, published by reflection, transcoded to REST. */
  files: DescFile[];
  /** An implementation for every service of `files`. */
  services: ServiceBinding[];
  /** Its frozen migrations, by name; names sort across all domains in the order they run. */
  migrations: Record<string, Migration>;
  /** Tables whose rows belong to a group (`group_uid`): a group holding any of them cannot be deleted. */
  ownedByGroup: TableWith<"group_uid">[];
  /** Tables whose rows belong to a repo (`repo_uid`) and go when it is deleted. */
  deletedWithRepo: TableWith<"repo_uid">[];
  /** Its background jobs by name, each started in every server process through the jobs kit (`src/domains/kit/jobs.ts`). */
  jobs?: Record<string, JobStart<S>>;
  /**
   * What it does, in the announcing domain's transaction, when another domain announces a change
   * (`src/domains/kit/reactions.ts`); the composition root composes every domain's.
   */
  reactions?: Partial<Reactions>;
  /**
   * Its commands of `platform-api`, by their full name (`registry import`). Also listed, without
   * loading the domain, in `src/server/commands.ts`, which the CLI reads.
   */
  commands?: Record<string, DomainCommand>;
}

export type { Ownership } from "./deps.js";
