/**
 * Spans through `@opentelemetry/api` only: without an SDK installed (`installTracing`, loaded
 * by `startTracingFromEnv` when the `OTEL_*` variables ask for one) nothing here is called per
 * request, so an unconfigured server pays one boolean test per call.
 */
let active = false;

/** Whether an SDK is installed: the interceptor and the hosts make spans only then. */
export function tracingActive(): boolean {
  return active;
}

/** Called by the SDK module when it installs or shuts down its provider. */
export function setTracingActive(value: boolean): void {
  active = value;
}
