import { invalidField } from "../../aip/errors.js";
import { checkOutboundUrl, checkPublicHost, OutboundFetchError, type OutboundPolicy } from "../../outbound/fetch.js";
import type { EventsConfig } from "../../config.js";

/** Longest sink URL. */
export const MAX_SINK_LENGTH = 2048;

/** The outbound policy of deliveries: https on public addresses, unless the operator admits local sinks. */
export function sinkPolicy(config: EventsConfig): OutboundPolicy {
  return {
    allowHttp: config.allowLocalSinks,
    allowPrivateAddresses: config.allowLocalSinks,
    relaxedBy: { http: "serve --events-allow-local-sinks", privateAddresses: "serve --events-allow-local-sinks" },
    timeoutMs: config.timeoutMs,
    maxBytes: 64 * 1024,
  };
}

/**
 * Checks a sink before it is stored: an absolute `https://` URL without credentials or
 * fragment whose host resolves to public addresses only (the same policy is applied again
 * at every delivery, at connect time). Throws INVALID_ARGUMENT on `subscription.sink`.
 */
export async function checkSink(sink: string, config: EventsConfig): Promise<URL> {
  const field = "subscription.sink";
  if (sink === "") throw invalidField(field, "is required");
  if (sink.length > MAX_SINK_LENGTH) throw invalidField(field, `must be at most ${MAX_SINK_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(sink);
  } catch {
    throw invalidField(field, "must be an absolute https:// URL");
  }
  if (url.hash !== "") throw invalidField(field, "must not have a fragment");
  try {
    checkOutboundUrl(url, sinkPolicy(config));
    if (!config.allowLocalSinks) await checkPublicHost(url);
  } catch (error) {
    if (error instanceof OutboundFetchError) throw invalidField(field, error.message);
    throw error;
  }
  return url;
}
