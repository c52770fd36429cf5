import type { Interceptor, StreamRequest, StreamResponse, UnaryRequest, UnaryResponse } from "@connectrpc/connect";
import type { Logger } from "../logger.js";
import type { AuditLog } from "../telemetry/audit-log.js";
import type { Metrics } from "../telemetry/metrics.js";
import { withContext } from "../telemetry/tracing.js";
import { callErrorOf } from "./api-errors.js";
import { callTelemetry } from "./call-telemetry.js";
import { withDeadline } from "./deadline.js";
import type { StreamShutdown } from "./stream-shutdown.js";

export interface BookkeepingOptions {
  logger: Logger;
  metrics: Metrics;
  /** Where changing calls are recorded; by default nowhere. */
  audit?: AuditLog;
  /** ErrorInfo.domain of the API's errors. */
  errorDomain: string;
  /** The longest a unary call may run, ms (`withDeadline`). */
  maxCallMs: number;
  /** Ends streams at shutdown; by default they are not ended. */
  streams?: StreamShutdown;
}

/**
 * The bookkeeping every call gets, outermost, in one step (one async frame a call instead of
 * one per concern), in this order from the outside in:
 * 1. telemetry (`callTelemetry`): log line, metrics, span, audit line, `x-request-id`;
 * 2. the failure made an API error (`callErrorOf`), as telemetry records it;
 * 3. a unary call's deadline (`withDeadline`); a stream's end at shutdown (`StreamShutdown`).
 * Authentication, authorization and events are the interceptors inside it.
 */
export function bookkeepingInterceptor(options: BookkeepingOptions): Interceptor {
  const { logger, errorDomain, maxCallMs, streams } = options;
  const telemetry = callTelemetry(logger, options.metrics, options.audit);
  return (next) => {
    const run = (req: UnaryRequest | StreamRequest): Promise<UnaryResponse | StreamResponse> =>
      req.stream ? next(streams ? streams.follow(req) : req) : withDeadline(next as (r: UnaryRequest) => Promise<UnaryResponse>, req, maxCallMs);
    return async (req) => {
      const call = telemetry.start(req);
      try {
        const res = call.traced ? await withContext(call.traced.context, () => run(req)) : await run(req);
        telemetry.answered(call, res);
        return res as never;
      } catch (error) {
        const failure = callErrorOf(error, req, logger, errorDomain);
        telemetry.failed(call, failure);
        throw failure;
      } finally {
        telemetry.end(call);
      }
    };
  };
}
