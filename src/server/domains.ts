import type { DescFile, DescService } from "@bufbuild/protobuf";
import type { Migration } from "kysely";
import { initial } from "../store/migrations/2026-11-22-0001-initial.js";
import { signingKeyActivation } from "../store/migrations/2026-11-26-0070-signing-key-activation.js";
import { advisory } from "../domains/advisory/module.js";
import { auth } from "../domains/auth/module.js";
import type { Domain, Ownership } from "../domains/kit/domain.js";
import type { DomainWorker, WorkerDeps } from "../domains/kit/deps.js";
import { composeReactions, type Reactions } from "../domains/kit/reactions.js";
import { events } from "../domains/events/module.js";
import { iam } from "../domains/iam/module.js";
import { libraries } from "../domains/libraries/module.js";
import { ping } from "../domains/ping/module.js";
import { registry } from "../domains/registry/module.js";
import { vulnerabilities } from "../domains/vulnerabilities/module.js";

/** Every domain the server serves, in the order their services are registered. Add a new one here. */
export const DOMAINS: readonly Domain[] = [ping, iam, auth, registry, vulnerabilities, advisory, libraries, events];

/** Every proto file served: reflection publishes them, the REST transcoder reads their HTTP rules. */
export const API_FILES: DescFile[] = DOMAINS.flatMap((d) => d.files);
export const API_SERVICES: DescService[] = API_FILES.flatMap((f) => f.services);

/** Where rows hang below groups and repos, over every domain. */
export const OWNERSHIP: Ownership = {
  ownedByGroup: DOMAINS.flatMap((d) => d.ownedByGroup),
  deletedWithRepo: DOMAINS.flatMap((d) => d.deletedWithRepo),
};

/**
 * Every migration: the store's first (the server's own tables and the IAM core) and each
 * domain's. Names are unique and sort in the order they run; a shipped one is never edited.
 */
export const MIGRATIONS: Record<string, Migration> = mergeMigrations(
  { "2026-11-22-0001-initial": initial, "2026-11-26-0070-signing-key-activation": signingKeyActivation },
  ...DOMAINS.map((d) => d.migrations));

function mergeMigrations(...sets: Record<string, Migration>[]): Record<string, Migration> {
  const all: Record<string, Migration> = {};
  for (const set of sets) {
    for (const [name, migration] of Object.entries(set)) {
      if (name in all) throw new Error(`migration ${name} is declared twice`);
      all[name] = migration;
    }
  }
  return all;
}

/** Every domain's reactions, composed: what the announcing domain is handed through its deps. */
export const REACTIONS: Reactions = composeReactions(DOMAINS);

/** Starts every domain's background workers (in each server process), with every domain's reactions; closing the result closes them all. */
export function startWorkers(options: Omit<WorkerDeps, "reactions">): { byName: Map<string, DomainWorker>; close(): Promise<void> } {
  const deps: WorkerDeps = { ...options, reactions: REACTIONS };
  const byName = new Map<string, DomainWorker>();
  for (const domain of DOMAINS) for (const [name, start] of Object.entries(domain.workers ?? {})) byName.set(name, start(deps));
  return { byName, close: async () => void (await Promise.all([...byName.values()].map((w) => w.close()))) };
}
