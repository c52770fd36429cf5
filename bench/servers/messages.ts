import type { SeededImage } from "./oci-image.js";

/**
 * What a bench server child sends its parent over IPC once it listens on
 * 127.0.0.1. Afterwards it answers each `"cpu"` message with a CpuReport, and
 * exits when the IPC channel closes.
 */

/** From `platform.ts`: the real server over a seeded SQLite store. */
export interface PlatformReady {
  kind: "platform";
  /** One port for gRPC (h2c), Connect (HTTP/1.1 and h2c) and REST. */
  port: number;
  /** A bearer token of the organization's owner, valid for an hour. */
  token: string;
  /** A folder with `childCount` groups directly below it. */
  folderUid: string;
  childCount: number;
  /** One of those groups. */
  groupUid: string;
  /** The IAM tree: a caller bound `viewer` deep in it, one identity it may read, and how many bindings it sees. */
  deep: { token: string; identityUid: string; visibleBindings: number; groupCount: number; bindingCount: number };
  /**
   * The registry: its host's port, an owner's platform token for the registry
   * audience (for `GET /token`), a repo with `tagCount` tags, and the seeding
   * time of the registry data, ms (part of `seedMs`), of which `imageSeedMs`
   * the pull figures' image (`image`, see `oci-image.ts`). The Tag History data
   * is in `tag-history.ts`.
   */
  registry: { port: number; platformToken: string; repoUid: string; tagCount: number; seedMs: number; image: SeededImage; imageSeedMs: number };
  /**
   * The advisories: `advisories` stored, derived from the RustSec feed (see `osv-feed.ts`), of
   * which `matching` have one of `names` as their artifact name and are served (not withdrawn).
   * `import` is the importer's pass that stored them, `parse` a pass that only `JSON.parse`d the
   * same bytes (both without the time spent deriving them).
   */
  advisories: { advisories: number; names: string[]; matching: number; parse: TimedPass; import: TimedPass };
  /**
   * The organization's library index: `artifacts` derived from the shipped library metadata (see
   * `seed-libraries.ts`), of which `matching` have `query` in their name; `seedMs` its import.
   */
  libraries: { artifacts: number; query: string; matching: number; seedMs: number };
  /** Wall time spent seeding the store, ms. */
  seedMs: number;
}

/** A timed pass over records: how many, wall time and CPU time of the process (microseconds, in all). */
export interface TimedPass {
  records: number;
  ms: number;
  cpuUs: number;
}

/** From `baselines.ts`: a minimal server answering Ping (and, for `http`, the Tag History body, the pull image's manifest and its layer blob). */
export interface BaselineReady {
  kind: "baseline";
  /** HTTP/1.1 port (Connect handler or plain JSON route). */
  h1Port?: number;
  /** HTTP/2 prior-knowledge port (Connect handler or grpc-js). */
  h2Port?: number;
}

export type ReadyMessage = PlatformReady | BaselineReady;

/** The child's CPU time so far (user + system), microseconds. */
export interface CpuReport {
  cpuMicros: number;
}

export const cpuMicros = (usage = process.cpuUsage()) => usage.user + usage.system;

/** Sends `message` to the parent, answers CPU queries, exits when the parent goes away (after `cleanUp`, when given). */
export function announce(message: ReadyMessage, cleanUp?: () => Promise<void>): void {
  const send = process.send?.bind(process);
  if (!send) throw new Error("a bench server must be started with an IPC channel (child_process.fork)");
  process.on("message", (query) => {
    if (query === "cpu") send({ cpuMicros: cpuMicros() } satisfies CpuReport);
  });
  process.on("disconnect", () => {
    void (cleanUp?.() ?? Promise.resolve()).catch(() => {}).finally(() => process.exit(0));
  });
  send(message);
}
