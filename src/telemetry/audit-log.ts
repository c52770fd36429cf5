import { closeSync, openSync, writeSync } from "node:fs";
import { stdoutLines } from "../stdout-lines.js";
import { createAnonymousRefusalLimiter, DEFAULT_ANONYMOUS_REFUSAL_LIMITS, type AnonymousRefusalLimits, type Suppressed } from "./anonymous-refusals.js";
import type { HostName } from "./metrics.js";

/**
 * The audit log: one JSON line per changing call on either host, apart from the access log
 * (docs/audit-log.md has the format field by field). Lines are written whole, by one
 * synchronous `write` each to a file opened for appending (or to stdout), so two writers never
 * interleave parts of lines, and a line is in the file when the call answers.
 */

/** Who made a call: an identity uid, or `anonymous` when no credential was verified. */
export interface AuditActor {
  subject: string;
  /** The subject is a pull token (the registry host's Basic credentials, or a registry token issued to one). */
  pullToken?: true;
}

/** The `sub` of a caller no credential was verified for, on both hosts. */
export const ANONYMOUS = "anonymous";

/** One audited call. */
export interface AuditEntry {
  host: HostName;
  /** The RPC procedure (`platform.iam.v2.GroupsService/CreateGroup`) or a registry action (`registry.manifest.put`). */
  action: string;
  /** What the call changed: a uid, a UIDP, or on the registry host `<repo>:<tag>` or `<repo>@<digest>`; "" when the call names none. */
  resource: string;
  /** `OK`, else the error's code: a gRPC code name (`PERMISSION_DENIED`) on the API host, an OCI error code (`DENIED`) on the registry host. */
  outcome: string;
  actor: AuditActor;
  requestId: string;
  /** The wire of an RPC (`grpc`, `connect`, `grpc-web`, `rest`). */
  protocol?: string;
  /** The address the call came from (its connection's peer): written for an anonymous caller, the only name it has. */
  clientAddress?: string;
}

/**
 * The longest `resource` written whole, in characters: no uid is longer (MAX_UID_LENGTH), and for
 * a refused call the resource is whatever the caller sent. A longer one is cut, and the line says
 * how long it was (`resourceLength`).
 */
export const MAX_RESOURCE_CHARS = 4096;
/** The same for an anonymous caller, who answers for nothing it sends. */
export const MAX_ANONYMOUS_RESOURCE_CHARS = 256;

export interface AuditLog {
  /** Writes `entry` as one line. Never throws: a failed write is counted in `failures` (and reported once per run of failures). */
  write(entry: AuditEntry): void;
  /** Writes that failed since the log was opened. */
  readonly failures: number;
  /** Opens the file again by its path (after logrotate moved it). Throws `AuditLogError` when it cannot, and keeps writing to the old one. */
  reopen(): void;
  /** Closes the file; later writes are dropped. */
  close(): void;
}

/** The line of `entry` at `time` (epoch ms), newline included; its resource cut to MAX_RESOURCE_CHARS (MAX_ANONYMOUS_RESOURCE_CHARS for an anonymous caller). */
export function auditLine(entry: AuditEntry, time: number): string {
  const { host, action, outcome, actor, requestId, protocol, clientAddress } = entry;
  const max = actor.subject === ANONYMOUS ? MAX_ANONYMOUS_RESOURCE_CHARS : MAX_RESOURCE_CHARS;
  const cut = entry.resource.length > max;
  const resource = cut ? entry.resource.slice(0, max) : entry.resource;
  const line = {
    time: new Date(time).toISOString(),
    msg: "audit",
    host,
    action,
    resource,
    ...(cut ? { resourceLength: entry.resource.length } : {}),
    outcome,
    actor,
    requestId,
    ...(protocol === undefined ? {} : { protocol }),
    ...(clientAddress === undefined || actor.subject !== ANONYMOUS ? {} : { clientAddress }),
  };
  return `${JSON.stringify(line)}\n`;
}

/** The action of a line that counts refused anonymous calls held back (`AnonymousRefusalLimits`). */
export const SUPPRESSED_ACTION = "audit.suppressed";

/** The summary line of what one client address had held back in a window, at `time`. */
export function suppressedLine(held: Suppressed, time: number): string {
  const line = {
    time: new Date(time).toISOString(),
    msg: "audit",
    host: held.host,
    action: SUPPRESSED_ACTION,
    resource: "",
    outcome: "SUPPRESSED",
    actor: { subject: ANONYMOUS },
    requestId: "",
    clientAddress: held.clientAddress,
    suppressed: held.count,
    outcomes: held.outcomes,
    since: new Date(held.since).toISOString(),
  };
  return `${JSON.stringify(line)}\n`;
}

export class AuditLogError extends Error {}

/**
 * Opens the audit log at `target` for appending (created with mode 0640 when missing), or
 * stdout for `-`. Throws `AuditLogError` naming the path when it cannot be opened.
 * `onFailure` hears of the first failed write after a good one. Refused calls of anonymous
 * callers are written up to `anonymousRefusals` (default DEFAULT_ANONYMOUS_REFUSAL_LIMITS), the
 * others counted in a summary line per client address when their window ends or the log closes.
 */
export function openAuditLog(
  target: string,
  options: { onFailure?: (error: Error) => void; now?: () => number; anonymousRefusals?: Partial<AnonymousRefusalLimits> } = {},
): AuditLog {
  const now = options.now ?? Date.now;
  const limiter = createAnonymousRefusalLimiter({ ...DEFAULT_ANONYMOUS_REFUSAL_LIMITS, ...options.anonymousRefusals }, now, (held) => {
    for (const h of held) append(suppressedLine(h, now()));
  });
  const open = () => {
    try {
      return openSync(target, "a", 0o640);
    } catch (error) {
      throw new AuditLogError(`cannot open the audit log ${target} for appending: ${(error as Error).message}`);
    }
  };
  let sink: number | "stdout" | "closed" = target === "-" ? "stdout" : open();
  let failures = 0;
  let failing = false;
  const failed = (error: Error) => {
    failures++;
    if (!failing) options.onFailure?.(error);
    failing = true;
  };
  /** Writes one whole line; a failure is counted, never thrown. */
  function append(line: string): void {
    if (sink === "closed") return;
    try {
      if (sink === "stdout") {
        // The logger writes to the same stream: each line is one write, so lines stay whole.
        if (!stdoutLines().write(line)) throw new Error("standard output cannot be written");
      } else {
        const bytes = Buffer.from(line);
        let written = writeSync(sink, bytes);
        while (written < bytes.length) written += writeSync(sink, bytes, written);
      }
      failing = false;
    } catch (error) {
      failed(error as Error);
    }
  }
  return {
    write(entry) {
      if (sink === "closed") return;
      if (entry.actor.subject === ANONYMOUS && entry.outcome !== "OK" && !limiter.admit(entry)) return;
      append(auditLine(entry, now()));
    },
    get failures() {
      return failures;
    },
    reopen() {
      if (typeof sink !== "number") return;
      const previous = sink;
      sink = open();
      closeSync(previous);
    },
    close() {
      for (const held of limiter.flush()) append(suppressedLine(held, now()));
      if (typeof sink === "number") closeSync(sink);
      sink = "closed";
    },
  };
}
