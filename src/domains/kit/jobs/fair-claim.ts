/**
 * A job's share of work per organization (the root of the work's group or repo), which its claim
 * reads and updates: the claim adds each item it takes to `held` (`took`), the job takes it out
 * when the item's work ends (`gave`, which `queueJob` does). So one organization's backlog or slow
 * work holds at most `perOrganization` of the job's slots and leaves the others theirs.
 */
export interface OrganizationTurns {
  /** Most items of one organization the job holds at once. */
  perOrganization: number;
  /** The items the job holds, by organization. */
  held: Map<string, number>;
}

/** Turns of `perOrganization` items each, none held. */
export function organizationTurns(perOrganization: number): OrganizationTurns {
  return { perOrganization, held: new Map() };
}

/** The items `organization` holds. */
export function heldBy(turns: OrganizationTurns | undefined, organization: string): number {
  return turns?.held.get(organization) ?? 0;
}

/** Whether `organization` holds its share: no more of its items is claimed (never without turns). */
export function holdsItsShare(turns: OrganizationTurns | undefined, organization: string): boolean {
  return turns !== undefined && heldBy(turns, organization) >= turns.perOrganization;
}

/** The organizations that hold their share. */
export function organizationsAtShare(turns: OrganizationTurns | undefined): string[] {
  return turns === undefined ? [] : [...turns.held.keys()].filter((organization) => holdsItsShare(turns, organization));
}

/** A claim took an item of `organization`. */
export function took(turns: OrganizationTurns | undefined, organization: string): void {
  turns?.held.set(organization, heldBy(turns, organization) + 1);
}

/** The work of an item of `organization` ended. */
export function gave(turns: OrganizationTurns, organization: string): void {
  const held = heldBy(turns, organization) - 1;
  if (held > 0) turns.held.set(organization, held);
  else turns.held.delete(organization);
}

/**
 * `items` in turns: each organization's first before any organization's second (an organization
 * that holds fewer items first), in the given order otherwise.
 */
export function inTurnsByOrganization<T>(items: readonly T[], organizationOf: (item: T) => string, turns: OrganizationTurns | undefined): T[] {
  const rank = new Map<string, number>();
  return items
    .map((item, at) => {
      const organization = organizationOf(item);
      const r = (rank.get(organization) ?? heldBy(turns, organization)) + 1;
      rank.set(organization, r);
      return { item, r, at };
    })
    .sort((a, b) => a.r - b.r || a.at - b.at)
    .map(({ item }) => item);
}
