import type { Db } from "./schema.js";

/**
 * What one domain's change makes another do, in the same transaction, without either importing
 * the other: the changing domain announces it, the reacting one registers in its module (which
 * the domain list loads). Today: advisories changed (an OSV import), so the registry matches the
 * images that hold those packages again.
 */
export type AdvisoriesChanged = (db: Db, packages: readonly { ecosystem: string; name: string }[], now: number) => Promise<void>;

const advisoryReactions: AdvisoriesChanged[] = [];

/** Registers `reaction` to every change of advisories. */
export function whenAdvisoriesChange(reaction: AdvisoriesChanged): void {
  advisoryReactions.push(reaction);
}

/** Announces that the advisories of `packages` changed in `db` (a transaction): runs every reaction in it. */
export async function advisoriesChanged(db: Db, packages: readonly { ecosystem: string; name: string }[], now: number): Promise<void> {
  for (const react of advisoryReactions) await react(db, packages, now);
}
