import { context, propagation, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { detectResources, envDetector, resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, BatchSpanProcessor, ConsoleSpanExporter, SimpleSpanProcessor, type SpanProcessor } from "@opentelemetry/sdk-trace-base";
import { setTracingActive } from "./tracing-state.js";

/**
 * The OpenTelemetry SDK, imported only when tracing is configured (`startTracingFromEnv`) or by
 * tests (with an in-memory exporter). Installs the global tracer provider (service name
 * `platform-api` unless `OTEL_SERVICE_NAME` or `OTEL_RESOURCE_ATTRIBUTES` say otherwise; sampler
 * from `OTEL_TRACES_SAMPLER`, default parent-based always-on), the W3C Trace Context propagator
 * and an AsyncLocalStorage context manager. Returns the shutdown, which flushes pending spans.
 */
export function installTracing(spanProcessors: SpanProcessor[]): () => Promise<void> {
  const resource = resourceFromAttributes({ "service.name": "platform-api" }).merge(detectResources({ detectors: [envDetector] }));
  const provider = new BasicTracerProvider({ resource, spanProcessors });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  setTracingActive(true);
  return async () => {
    setTracingActive(false);
    await provider.shutdown();
    trace.disable();
    propagation.disable();
    context.disable();
  };
}

/**
 * The span processors for `OTEL_TRACES_EXPORTER`'s names: `otlp` sends OTLP over HTTP
 * (`OTEL_EXPORTER_OTLP_TRACES_PROTOCOL` or `OTEL_EXPORTER_OTLP_PROTOCOL`: `http/protobuf`, the
 * default, or `http/json`) to `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or
 * `OTEL_EXPORTER_OTLP_ENDPOINT`/v1/traces (default http://localhost:4318/v1/traces), with
 * `OTEL_EXPORTER_OTLP_HEADERS`, batched (`OTEL_BSP_*`); `console` prints each span.
 * Throws for another exporter or protocol (`grpc`), naming what is supported.
 */
export async function exportersFromEnv(names: string[], env: NodeJS.ProcessEnv): Promise<SpanProcessor[]> {
  const processors: SpanProcessor[] = [];
  for (const name of names) {
    if (name === "console") {
      processors.push(new SimpleSpanProcessor(new ConsoleSpanExporter()));
    } else if (name === "otlp") {
      const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? "http/protobuf";
      if (protocol === "http/protobuf") {
        const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-proto");
        processors.push(new BatchSpanProcessor(new OTLPTraceExporter()));
      } else if (protocol === "http/json") {
        const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-http");
        processors.push(new BatchSpanProcessor(new OTLPTraceExporter()));
      } else {
        throw new Error(`OTEL_EXPORTER_OTLP_PROTOCOL=${protocol} is not supported: use http/protobuf or http/json (OTLP over HTTP, port 4318 of a collector)`);
      }
    } else {
      throw new Error(`OTEL_TRACES_EXPORTER=${name} is not supported: use otlp, console or none`);
    }
  }
  return processors;
}
