import type { DescFile, DescService } from "@bufbuild/protobuf";
import { advisory } from "../domains/advisory/module.js";
import { auth } from "../domains/auth/module.js";
import type { Domain, Ownership } from "../domains/kit/domain.js";
import type { Job, JobContext } from "../domains/kit/jobs.js";
import { composeReactions, type Reactions } from "../domains/kit/reactions.js";
import { events } from "../domains/events/module.js";
import { iam } from "../domains/iam/module.js";
import { libraries } from "../domains/libraries/module.js";
import { ping } from "../domains/ping/module.js";
import { registry } from "../domains/registry/module.js";
import { vulnerabilities } from "../domains/vulnerabilities/module.js";
import { MIGRATIONS } from "./migrations.js";

/** Every domain the server serves, in the order their services are registered. Add a new one here. */
export const DOMAINS: readonly Domain<JobSettings>[] = [ping, iam, auth, registry, vulnerabilities, advisory, libraries, events];

/** Every proto file served: reflection publishes them, the REST transcoder reads their HTTP rules. */
export const API_FILES: DescFile[] = DOMAINS.flatMap((d) => d.files);
export const API_SERVICES: DescService[] = API_FILES.flatMap((f) => f.services);

/** Where rows hang below groups and repos, over every domain. */
export const OWNERSHIP: Ownership = {
  ownedByGroup: DOMAINS.flatMap((d) => d.ownedByGroup),
  deletedWithRepo: DOMAINS.flatMap((d) => d.deletedWithRepo),
};

// Each domain's migrations are in the light list open-store reads; a domain left out of it would
// never have its tables created.
for (const domain of DOMAINS) {
  for (const name of Object.keys(domain.migrations)) if (!(name in MIGRATIONS)) throw new Error(`migration ${name} of ${domain.name} is not in src/server/migrations.ts`);
}

/** Every domain's reactions, composed: what the announcing domain is handed through its deps. */
export const REACTIONS: Reactions = composeReactions(DOMAINS);

/** What every domain's jobs are started with beside the database and the logger: each job's type names only its own domain's part. */
export type JobSettings = SettingsOf<typeof registry> & SettingsOf<typeof events> & SettingsOf<typeof vulnerabilities>;
type SettingsOf<D> = D extends Domain<infer S> ? S : never;

/** Starts every domain's jobs (in each server process), with every domain's reactions; closing the result closes them all. */
export function startJobs(context: JobContext, settings: Omit<JobSettings, "reactions">): { byName: Map<string, Job>; close(): Promise<void> } {
  const byName = new Map<string, Job>();
  const all = { ...settings, reactions: REACTIONS } as JobSettings;
  for (const domain of DOMAINS) for (const [name, start] of Object.entries(domain.jobs ?? {})) byName.set(name, start({ ...all, ...context }));
  return { byName, close: async () => void (await Promise.all([...byName.values()].map((job) => job.close()))) };
}
