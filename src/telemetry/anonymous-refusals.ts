import type { HostName } from "./metrics.js";

/** What the limiter reads of a refused call's audit entry. */
export interface Refusal {
  host: HostName;
  /** The error's code name. */
  outcome: string;
  /** "" or absent when unknown: such calls share one count. */
  clientAddress?: string;
}

/**
 * How many refused calls of anonymous callers the audit log writes in full: such a caller is
 * unaccountable and chooses what its lines hold, so a flood of them would fill the disk. Within a
 * window, each client address has its first `perClient` lines written and all addresses together
 * their first `inAll`; the others are counted, and when the window ends each address whose lines
 * were held back gets one summary line with the count (`suppressedEntries`).
 */
export interface AnonymousRefusalLimits {
  /** Lines written per client address and window. */
  perClient: number;
  /** Lines written per window, all addresses together; also the most summary lines naming an address. */
  inAll: number;
  /** The window, ms: it starts with the first such line after the previous one ended. */
  windowMs: number;
}

export const DEFAULT_ANONYMOUS_REFUSAL_LIMITS: AnonymousRefusalLimits = { perClient: 10, inAll: 100, windowMs: 10_000 };

/** Addresses counted at once; beyond, held-back lines are counted under OTHER_CLIENTS. */
const MAX_TRACKED_CLIENTS = 10_000;
/** The client address of the summary line that counts the addresses without one of their own. */
export const OTHER_CLIENTS = "*";

/** What was held back from one client address in one window. */
export interface Suppressed {
  host: HostName;
  clientAddress: string;
  /** Lines held back. */
  count: number;
  /** Held-back lines by outcome. */
  outcomes: Record<string, number>;
  /** When the window began, epoch ms. */
  since: number;
}

interface ClientCount {
  written: number;
  suppressed?: Suppressed;
}

export interface AnonymousRefusalLimiter {
  /** Whether `entry` (a refused call of an anonymous caller) is written; when not, it is counted. */
  admit(entry: Refusal): boolean;
  /** Ends the window now: what was held back in it, one per address (at most `inAll`, then the rest as one). */
  flush(): Suppressed[];
}

/**
 * Counts anonymous refusals per window (`AnonymousRefusalLimits`). `onWindowEnd` hears what was
 * held back when a window ends by its timer (unreferenced: it keeps no process alive); `flush`
 * ends one at once (the log closing).
 */
export function createAnonymousRefusalLimiter(limits: AnonymousRefusalLimits, now: () => number, onWindowEnd: (held: Suppressed[]) => void): AnonymousRefusalLimiter {
  const clients = new Map<string, ClientCount>();
  let written = 0;
  let since = 0;
  let timer: NodeJS.Timeout | undefined;
  let others: Suppressed | undefined;

  function flush(): Suppressed[] {
    if (timer) clearTimeout(timer);
    timer = undefined;
    const held: Suppressed[] = [];
    let rest = others;
    for (const client of clients.values()) {
      const suppressed = client.suppressed;
      if (!suppressed) continue;
      if (held.length < limits.inAll) {
        held.push(suppressed);
        continue;
      }
      rest ??= { host: suppressed.host, clientAddress: OTHER_CLIENTS, count: 0, outcomes: {}, since };
      rest.count += suppressed.count;
      for (const [outcome, n] of Object.entries(suppressed.outcomes)) rest.outcomes[outcome] = (rest.outcomes[outcome] ?? 0) + n;
    }
    if (rest) held.push(rest);
    clients.clear();
    others = undefined;
    written = 0;
    return held;
  }

  function count(into: Suppressed, entry: Refusal): void {
    into.count += 1;
    into.outcomes[entry.outcome] = (into.outcomes[entry.outcome] ?? 0) + 1;
  }

  return {
    admit(entry) {
      if (!timer) {
        since = now();
        timer = setTimeout(() => {
          timer = undefined;
          const held = flush();
          if (held.length > 0) onWindowEnd(held);
        }, limits.windowMs);
        timer.unref();
      }
      const address = entry.clientAddress ?? "";
      let client = clients.get(address);
      if (!client) {
        if (clients.size >= MAX_TRACKED_CLIENTS) {
          others ??= { host: entry.host, clientAddress: OTHER_CLIENTS, count: 0, outcomes: {}, since };
          count(others, entry);
          return false;
        }
        client = { written: 0 };
        clients.set(address, client);
      }
      if (client.written < limits.perClient && written < limits.inAll) {
        client.written += 1;
        written += 1;
        return true;
      }
      client.suppressed ??= { host: entry.host, clientAddress: address, count: 0, outcomes: {}, since };
      count(client.suppressed, entry);
      return false;
    },
    flush,
  };
}
