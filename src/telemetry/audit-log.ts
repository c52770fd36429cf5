import { closeSync, openSync, writeSync } from "node:fs";
import { stdoutLines } from "../stdout-lines.js";
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
}

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

/** The line of `entry` at `time` (epoch ms), newline included. */
export function auditLine(entry: AuditEntry, time: number): string {
  const { host, action, resource, outcome, actor, requestId, protocol } = entry;
  const line = { time: new Date(time).toISOString(), msg: "audit", host, action, resource, outcome, actor, requestId, ...(protocol === undefined ? {} : { protocol }) };
  return `${JSON.stringify(line)}\n`;
}

export class AuditLogError extends Error {}

/**
 * Opens the audit log at `target` for appending (created with mode 0640 when missing), or
 * stdout for `-`. Throws `AuditLogError` naming the path when it cannot be opened.
 * `onFailure` hears of the first failed write after a good one.
 */
export function openAuditLog(target: string, options: { onFailure?: (error: Error) => void; now?: () => number } = {}): AuditLog {
  const now = options.now ?? Date.now;
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
  return {
    write(entry) {
      if (sink === "closed") return;
      const line = auditLine(entry, now());
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
      if (typeof sink === "number") closeSync(sink);
      sink = "closed";
    },
  };
}
