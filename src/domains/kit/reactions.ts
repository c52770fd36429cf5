import type { Db } from "./schema.js";

/**
 * What one domain's change makes another do, in the same transaction, without either importing
 * the other: the reacting domain declares its reaction in its `Domain` value (`reactions`), the
 * composition root composes every domain's (`composeReactions`) and hands the result to the
 * announcing domain through its deps, which runs it inside its own transaction.
 */
export interface Reactions {
  /**
   * The advisories of `packages` changed in `db` (a transaction): an OSV import, announced by the
   * vulnerabilities domain; the registry matches the images that hold those packages again.
   */
  advisoriesChanged: (db: Db, packages: readonly { ecosystem: string; name: string }[], now: number) => Promise<void>;
}

/** Reactions that do nothing: what an announcing domain runs when it is given none. */
export const NO_REACTIONS: Reactions = { advisoriesChanged: async () => {} };

/** Every declared reaction of `domains`, each kind running the domains' reactions in their order. */
export function composeReactions(domains: readonly { reactions?: Partial<Reactions> }[]): Reactions {
  const advisoriesChanged = domains.flatMap((d) => (d.reactions?.advisoriesChanged ? [d.reactions.advisoriesChanged] : []));
  return {
    advisoriesChanged: async (db, packages, now) => {
      for (const react of advisoriesChanged) await react(db, packages, now);
    },
  };
}
