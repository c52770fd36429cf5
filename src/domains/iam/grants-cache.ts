import type { Grants } from "../../access/principal.js";
import { grantsFrom } from "../../access/principal.js";
import { grantsOf } from "./store/role-bindings.js";
import type { Db } from "../kit/schema.js";

/**
 * The grants of identities, kept between calls and dropped when they may have changed.
 *
 * Contract: `grantsOf` answers what the store held at most `maxAgeMs` (the call's when it names
 * one, else the cache's; plus one query) before the call, or, after `changed()` was called, what
 * it held after the write that preceded `changed()`. The store's `grants_clock` row advances in
 * the transaction of every change to role bindings, role capabilities or identities' deletion
 * (triggers, migration 0080); an entry is used only while the clock still shows the value read
 * before the entry's own query. The clock is read again when `maxAgeMs` have passed since the
 * last read (on every call that names 0, the grants then read only when the clock moved), and at
 * once after `changed()`, which the process calls after each of its own writes: a revocation
 * holds immediately on the replica that made it, and within `maxAgeMs` on the others.
 */
export interface GrantsCache {
  /** The identity's grants, or undefined when it does not exist (never cached); `maxAgeMs` narrows the cache's bound for this call. */
  grantsOf(identityUid: string, maxAgeMs?: number): Promise<Grants | undefined>;
  /** This process wrote something that may change grants: the next lookup reads the clock again. */
  changed(): void;
}

/** How long another replica's change to grants may go unseen by this one, at most (plus one query). */
export const GRANTS_MAX_AGE_MS = 1000;

interface Entry {
  clock: string;
  grants: Grants;
}

export function createGrantsCache(db: Db, options: { maxAgeMs?: number; capacity?: number; now?: () => number } = {}): GrantsCache {
  const maxAgeMs = options.maxAgeMs ?? GRANTS_MAX_AGE_MS;
  const capacity = options.capacity ?? 10_000;
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry>();
  let clock = "";
  let checkedAt = -Infinity;
  /** Advanced by `changed()`: a clock read that started before it does not count as fresh. */
  let generation = 0;
  let reading: Promise<string> | undefined;

  async function readClock(): Promise<string> {
    const startedAt = now();
    const startedIn = generation;
    const row = await db.selectFrom("grants_clock").select("value").where("id", "=", 1).executeTakeFirst();
    const value = String(row?.value ?? 0);
    // The clock only grows; a read that finished after a later one must not move it back.
    if (clock === "" || BigInt(value) > BigInt(clock)) {
      entries.clear();
      clock = value;
    }
    if (startedIn === generation) checkedAt = startedAt;
    return clock;
  }

  function currentClock(age: number): string | Promise<string> {
    if (now() - checkedAt < age) return clock;
    if (!reading) {
      const read: Promise<string> = readClock().finally(() => {
        if (reading === read) reading = undefined;
      });
      reading = read;
    }
    return reading;
  }

  return {
    async grantsOf(identityUid, age = maxAgeMs) {
      const at = await currentClock(Math.min(age, maxAgeMs));
      const hit = entries.get(identityUid);
      if (hit && hit.clock === at) return hit.grants;
      const pairs = await grantsOf(db, identityUid);
      if (pairs === undefined) return undefined;
      const grants = grantsFrom(pairs);
      // Tagged with the clock read before the query: a change committed since makes it stale.
      if (at === clock) {
        if (entries.size >= capacity) entries.delete(entries.keys().next().value!);
        entries.set(identityUid, { clock: at, grants });
      }
      return grants;
    },
    changed() {
      generation++;
      checkedAt = -Infinity;
      // A read in flight may have started before the write committed: the next lookup starts its own.
      reading = undefined;
    },
  };
}
