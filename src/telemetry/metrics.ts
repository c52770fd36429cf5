import type { Server, Socket } from "node:net";
import { stdoutLines } from "../stdout-lines.js";
import { collectDefaultMetrics, Counter, Gauge, Registry } from "prom-client";
import { SlotCounter, SlotHistogram, type HistogramSlot } from "./slot-metrics.js";
import type { PoolStats, QueryObserver } from "../store/dialect.js";

/** Seconds; from 1 ms (a point read) to 10 s (a deadline), as grpc-ecosystem's defaults plus the fast end. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Seconds; store queries are mostly well under a millisecond. */
const QUERY_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

/** What a host's plain HTTP requests are counted by: which host, which route (a fixed name, never the path). */
export type HostName = "api" | "registry";

/** The RPC a call was made to: `grpc_type` is unary, server_stream, client_stream or bidi_stream. */
export interface RpcLabels {
  grpc_type: string;
  grpc_service: string;
  grpc_method: string;
}

/**
 * The server's Prometheus metrics, in a registry of its own (several servers in one process,
 * as tests run them, do not mix). Names follow grpc-ecosystem's go-grpc-prometheus for RPCs
 * and OpenTelemetry's HTTP and database conventions otherwise (see docs/operations.md, Metrics).
 * Every label takes values from a fixed set (methods, codes, route names), never from a request's path.
 */
export interface Metrics {
  registry: Registry;
  rpcStarted: SlotCounter<keyof RpcLabels>;
  rpcHandled: SlotCounter<keyof RpcLabels | "grpc_code" | "protocol">;
  rpcSeconds: SlotHistogram<keyof RpcLabels>;
  rpcInFlight: SlotCounter<"grpc_service" | "grpc_method">;
  httpRequests: SlotCounter<"host" | "route" | "method" | "status">;
  httpSeconds: SlotHistogram<"host" | "route">;
  httpInFlight: SlotCounter<"host">;
  querySeconds: SlotHistogram<"operation" | "outcome">;
  /** Counts the bytes every connection of `server` sends and receives, as `host`. */
  countBytes(server: Server, host: HostName): void;
  /** One advisory feed sync of this process: `result` imported, not-modified or failed; `counts` when records were read. */
  feedSynced(feed: string, result: string, counts?: { read: number; added: number; updated: number; unchanged: number; rejected: number }): void;
  /** A feed's stored times (epoch ms; 0: never), whichever replica synced it. */
  feedState(feed: string, lastSuccessMs: number, lastAttemptMs: number): void;
  /** The registry host served what it held because upstream `upstream` (its URL) failed or was too slow (`registry_upstream_fallbacks_total`). */
  upstreamFallback(upstream: string): void;
  /** Reports the store's pool at each scrape (PostgreSQL; SQLite has one connection, used one query or transaction at a time, and no pool metrics). Once per registry. */
  observePool(stats: () => PoolStats): void;
  /** A manifest pull no trusted key verified, under a trust policy `warn` (pulled) or `enforce` (refused). */
  unverifiedPull(mode: "warn" | "enforce"): void;
  /** Reports the audit log's failed writes at each scrape (`audit_log_write_failures_total`). Once per registry. */
  observeAuditLog(failures: () => number): void;
}

/** `processMetrics`: also Node's and the process's own (CPU, memory, event loop lag, GC), as prom-client names them, and the log lines it dropped. */
export function createMetrics(options: { processMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  const registers = [registry];
  if (options.processMetrics) {
    collectDefaultMetrics({ register: registry });
    new Counter({
      name: "log_lines_dropped_total",
      help: "Log lines that could not be written to standard output (a full disk, a reader gone); the server went on.",
      registers,
      collect() {
        this.reset();
        this.inc(stdoutLines().dropped);
      },
    });
  }

  const sockets = new Map<HostName, { sent: number; received: number; open: Set<Socket> }>();
  const bytes = (pick: "sent" | "received") =>
    function (this: Counter<"host">) {
      this.reset();
      for (const [host, s] of sockets) {
        let total = s[pick];
        for (const socket of s.open) total += pick === "sent" ? socket.bytesWritten : socket.bytesRead;
        this.inc({ host }, total);
      }
    };
  new Counter({ name: "http_server_sent_bytes_total", help: "Bytes sent on the host's connections (all protocols, headers included).", labelNames: ["host"], registers, collect: bytes("sent") });
  new Counter({ name: "http_server_received_bytes_total", help: "Bytes received on the host's connections.", labelNames: ["host"], registers, collect: bytes("received") });

  const upstreamFallbacks = new Counter({
    name: "registry_upstream_fallbacks_total",
    help: "Pulls through an upstream registry answered with what the registry held, because the upstream failed or was too slow, by upstream URL.",
    labelNames: ["upstream"],
    registers,
  });
  const feedSyncs = new Counter({ name: "advisory_feed_syncs_total", help: "Advisory feed syncs this process ran, by feed URL and result (imported, not_modified, failed).", labelNames: ["feed", "result"], registers });
  const feedFailures = new Counter({ name: "advisory_feed_failures_total", help: "Advisory feed syncs of this process that failed (nothing written; retried after a backoff).", labelNames: ["feed"], registers });
  const feedRecords = new Counter({
    name: "advisory_feed_records_total",
    help: "Records read from advisory feeds by this process, by outcome (read, new, updated, unchanged, rejected).",
    labelNames: ["feed", "outcome"],
    registers,
  });
  const feedLastSuccess = new Gauge({ name: "advisory_feed_last_success_timestamp_seconds", help: "When the feed was last synced successfully, by any replica (0: never).", labelNames: ["feed"], registers });
  const feedLastAttempt = new Gauge({ name: "advisory_feed_last_attempt_timestamp_seconds", help: "When a sync of the feed last started, by any replica (0: never).", labelNames: ["feed"], registers });

  const unverifiedPulls = new Counter({
    name: "platform_registry_unverified_pulls_total",
    help: "Manifest pulls no trusted key verified, by the trust policy's mode (warn: served, enforce: refused).",
    labelNames: ["mode"],
    registers,
  });

  return {
    registry,
    unverifiedPull: (mode) => unverifiedPulls.inc({ mode }),
    feedSynced(feed, result, counts) {
      feedSyncs.inc({ feed, result: result.replace("-", "_") });
      if (result === "failed") feedFailures.inc({ feed });
      if (!counts) return;
      for (const [outcome, n] of [["read", counts.read], ["new", counts.added], ["updated", counts.updated], ["unchanged", counts.unchanged], ["rejected", counts.rejected]] as const) feedRecords.inc({ feed, outcome }, n);
    },
    feedState(feed, lastSuccessMs, lastAttemptMs) {
      feedLastSuccess.set({ feed }, lastSuccessMs / 1000);
      feedLastAttempt.set({ feed }, lastAttemptMs / 1000);
    },
    rpcStarted: new SlotCounter({ name: "grpc_server_started_total", help: "RPCs started, on every protocol (gRPC, gRPC-Web, Connect, REST).", labelNames: ["grpc_type", "grpc_service", "grpc_method"], registers }, "counter"),
    rpcHandled: new SlotCounter(
      {
        name: "grpc_server_handled_total",
        help: "RPCs completed, by gRPC status code and wire protocol.",
        labelNames: ["grpc_type", "grpc_service", "grpc_method", "grpc_code", "protocol"],
        registers,
      },
      "counter",
    ),
    rpcSeconds: new SlotHistogram({
      name: "grpc_server_handling_seconds",
      help: "Time from an RPC reaching the interceptors to its answer (or, for a stream, its end).",
      labelNames: ["grpc_type", "grpc_service", "grpc_method"],
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    rpcInFlight: new SlotCounter({ name: "grpc_server_in_flight", help: "RPCs in progress.", labelNames: ["grpc_service", "grpc_method"], registers }, "gauge"),
    httpRequests: new SlotCounter(
      {
        name: "http_server_requests_total",
        help: "Plain HTTP requests (REST, discovery, /sts/exchange, unknown paths on the API host; every registry request), by route and status.",
        labelNames: ["host", "route", "method", "status"],
        registers,
      },
      "counter",
    ),
    httpSeconds: new SlotHistogram({
      name: "http_server_request_duration_seconds",
      help: "Time from a plain HTTP request's arrival to its last byte sent.",
      labelNames: ["host", "route"],
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    httpInFlight: new SlotCounter({ name: "http_server_requests_in_flight", help: "Plain HTTP requests in progress.", labelNames: ["host"], registers }, "gauge"),
    querySeconds: new SlotHistogram({
      name: "db_client_operation_duration_seconds",
      help: "Store query time, by operation (select, insert, update, delete, raw) and outcome (ok, error).",
      labelNames: ["operation", "outcome"],
      buckets: QUERY_BUCKETS,
      registers,
    }),
    upstreamFallback(upstream) {
      upstreamFallbacks.inc({ upstream });
    },
    countBytes(server, host) {
      const s = { sent: 0, received: 0, open: new Set<Socket>() };
      sockets.set(host, s);
      server.on("connection", (socket: Socket) => {
        s.open.add(socket);
        socket.once("close", () => {
          s.open.delete(socket);
          s.sent += socket.bytesWritten;
          s.received += socket.bytesRead;
        });
      });
    },
    observePool(pool) {
      new Gauge({
        name: "db_client_connections",
        help: "PostgreSQL pool connections by state (idle, used).",
        labelNames: ["state"],
        registers,
        collect() {
          const s = pool();
          this.set({ state: "idle" }, s.idle);
          this.set({ state: "used" }, s.total - s.idle);
        },
      });
      new Gauge({ name: "db_client_connections_max", help: "PostgreSQL pool size.", registers, collect() { this.set(pool().max); } });
      new Gauge({ name: "db_client_connections_pending_requests", help: "Queries waiting for a PostgreSQL pool connection.", registers, collect() { this.set(pool().waiting); } });
    },
    observeAuditLog(failures) {
      new Counter({
        name: "audit_log_write_failures_total",
        help: "Lines of the audit log (serve --audit-log) that could not be written (the call went on).",
        registers,
        collect() {
          this.reset();
          this.inc(failures());
        },
      });
    },
  };
}

/** The store's query observer feeding `db_client_operation_duration_seconds` (a slot per operation and outcome, found once). */
export function queryObserver(metrics: Metrics): QueryObserver {
  const slots = new Map<string, { ok: HistogramSlot; error: HistogramSlot }>();
  return (operation, seconds, failed) => {
    let slot = slots.get(operation);
    if (!slot) slots.set(operation, (slot = { ok: metrics.querySeconds.slot({ operation, outcome: "ok" }), error: metrics.querySeconds.slot({ operation, outcome: "error" }) }));
    (failed ? slot.error : slot.ok).observe(seconds);
  };
}
