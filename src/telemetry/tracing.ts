import { context, propagation, SpanKind, SpanStatusCode, trace, type Context, type Span, type TextMapGetter } from "@opentelemetry/api";
import type { Logger } from "../logger.js";

import { tracingActive } from "./tracing-state.js";

export { tracingActive };

const TRACER = "platform-api";

const headerGetter: TextMapGetter<Headers> = {
  get: (carrier, key) => carrier.get(key) ?? undefined,
  keys: (carrier) => [...carrier.keys()],
};

const nodeHeaderGetter: TextMapGetter<Record<string, string | string[] | undefined>> = {
  get: (carrier, key) => carrier[key],
  keys: (carrier) => Object.keys(carrier),
};

/** A server span whose parent is the caller's `traceparent` (W3C Trace Context), if any. */
export function startServerSpan(
  name: string,
  headers: Headers | Record<string, string | string[] | undefined>,
  attributes: Record<string, string | number>,
): { span: Span; context: Context } {
  const parent =
    headers instanceof Headers ? propagation.extract(context.active(), headers, headerGetter) : propagation.extract(context.active(), headers, nodeHeaderGetter);
  const span = trace.getTracer(TRACER).startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
  return { span, context: trace.setSpan(parent, span) };
}

/** Ends a span with an error status when `failed`. */
export function endSpan(span: Span, failed: boolean, attributes: Record<string, string | number>, message?: string): void {
  span.setAttributes(attributes);
  if (failed) span.setStatus({ code: SpanStatusCode.ERROR, message });
  span.end();
}

/** Runs `fn` with `ctx` active (so outgoing requests made inside carry its `traceparent`). */
export function withContext<T>(ctx: Context, fn: () => T): T {
  return context.with(ctx, fn);
}

/** Adds the active span's `traceparent` to outgoing request headers; nothing when no SDK is installed. */
export function injectTraceContext(headers: Record<string, string>): void {
  if (tracingActive()) propagation.inject(context.active(), headers);
}

/** The trace id of a span, for log lines. */
export function traceIdOf(span: Span): string {
  return span.spanContext().traceId;
}

/**
 * Installs the OpenTelemetry SDK when the standard variables configure an exporter:
 * `OTEL_TRACES_EXPORTER` (`otlp`, `console`, `none`; default `otlp` when
 * `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set, else none),
 * unless `OTEL_SDK_DISABLED=true`. The SDK modules are imported only then. Resolves with
 * its shutdown (which flushes spans), or undefined when tracing stays off.
 */
export async function startTracingFromEnv(env: NodeJS.ProcessEnv, logger: Logger): Promise<(() => Promise<void>) | undefined> {
  if (env.OTEL_SDK_DISABLED?.toLowerCase() === "true") return undefined;
  const named = env.OTEL_TRACES_EXPORTER?.split(",").map((s) => s.trim().toLowerCase()).filter((s) => s !== "");
  const exporters = named ?? (env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ? ["otlp"] : []);
  if (exporters.length === 0 || exporters.includes("none")) return undefined;
  const sdk = await import("./tracing-sdk.js");
  const shutdown = sdk.installTracing(await sdk.exportersFromEnv(exporters, env));
  logger.info("tracing", { exporters });
  return shutdown;
}
