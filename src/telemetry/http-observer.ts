import type { Context } from "@opentelemetry/api";
import type { NodeRequest, NodeResponse } from "../transport/http/node-types.js";
import type { Logger } from "../logger.js";
import type { AuditActor } from "./audit-log.js";
import type { HostName, Metrics } from "./metrics.js";
import type { HistogramSlot, Slot } from "./slot-metrics.js";
import { REQUEST_ID_HEADER, requestIdOf } from "./request-id.js";
import { endSpan, startServerSpan, traceIdOf, tracingActive } from "./tracing.js";

/** The methods counted by name; any other is counted as OTHER (a caller chooses the method: labels must stay few). */
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/** What a host learns of a request as it answers it, for its log line. */
export interface RouteNote {
  /** The route, once known: a fixed name such as `manifest`, never the path. */
  route: string;
  /** Who asked, once a credential was verified (`anonymous` for an anonymous registry token). */
  actor?: AuditActor;
  /** How the caller of the registry host's `/token` authenticated. */
  credential?: "pull_token" | "registry_password" | "basic" | "bearer" | "none";
}

/**
 * Observes one plain HTTP request (not an RPC) from its arrival to its last byte or its end:
 * one log line `{"msg": "request", host, method, path, route, status, durationMs, requestId}`,
 * `http_server_*` metrics by host, route, method and status, and the request id in
 * `x-request-id`. With `spans` and tracing on, a server span (child of the caller's
 * `traceparent`, named `<method> <route>`); its context is returned to run the request in.
 * With `callers`, the line also names the caller: `subject` (null when no credential was
 * verified), `pullToken: true` for a pull token, and `credential` when the note has one.
 */
export function createHttpObserver(options: { host: HostName; metrics: Metrics; logger: Logger; spans: boolean; callers?: boolean }) {
  const { host, metrics, logger } = options;
  const inFlight = metrics.httpInFlight.slot({ host });
  // Slots are found once per route (and method and status): a request's metrics are then number changes.
  const routes = new Map<string, { seconds: HistogramSlot; requests: Map<string, Map<number, Slot>> }>();
  const slotsOf = (route: string, method: string, status: number) => {
    let slots = routes.get(route);
    if (!slots) routes.set(route, (slots = { seconds: metrics.httpSeconds.slot({ host, route }), requests: new Map() }));
    let byStatus = slots.requests.get(method);
    if (!byStatus) slots.requests.set(method, (byStatus = new Map()));
    let requests = byStatus.get(status);
    if (!requests) byStatus.set(status, (requests = metrics.httpRequests.slot({ host, route, method, status: String(status) })));
    return { requests, seconds: slots.seconds };
  };
  return function observe(req: NodeRequest, res: NodeResponse, note: RouteNote): Context | undefined {
    const start = performance.now();
    const requestId = requestIdOf(req);
    res.setHeader(REQUEST_ID_HEADER, requestId);
    const path = (req.url ?? "").split("?")[0].slice(0, 256);
    const method = (req.method ?? "GET").slice(0, 16);
    const traced = options.spans && tracingActive() ? startServerSpan(`${method} ${host}`, req.headers, { "http.request.method": method, "url.path": path }) : undefined;
    inFlight.value++;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      const seconds = (performance.now() - start) / 1000;
      // A response closed before it finished (the client went away) is logged with status 499, as proxies do.
      const status = res.writableEnded ? res.statusCode : 499;
      inFlight.value--;
      const slots = slotsOf(note.route, METHODS.has(method) ? method : "OTHER", status);
      slots.requests.value++;
      slots.seconds.observe(seconds);
      if (traced) {
        traced.span.updateName(`${method} ${note.route}`);
        endSpan(traced.span, status >= 500, { "http.route": note.route, "http.response.status_code": status });
      }
      logger.info("request", {
        host,
        method,
        path,
        route: note.route,
        status,
        durationMs: Math.round(seconds * 100_000) / 100,
        requestId,
        ...(options.callers ? callerFields(note) : {}),
        ...(traced ? { traceId: traceIdOf(traced.span) } : {}),
      });
    };
    res.once("finish", finish);
    res.once("close", finish);
    return traced?.context;
  };
}

function callerFields({ actor, credential }: RouteNote): Record<string, unknown> {
  return { subject: actor?.subject ?? null, ...(actor?.pullToken ? { pullToken: true } : {}), ...(credential ? { credential } : {}) };
}
