import { CommandError } from "../../command/options.js";

/** How long a call to the API may take before it is abandoned. */
export const CALL_TIMEOUT_MS = 60_000;

/**
 * `fetch(api + path)`, abandoned after `timeoutMs`. Resolves to any answer, error statuses
 * included; a network failure or a timeout throws CommandError "cannot reach <api>: <reason>".
 */
export async function call(api: string, path: string, init: RequestInit = {}, timeoutMs = CALL_TIMEOUT_MS): Promise<Response> {
  try {
    return await fetch(`${api}${path}`, { ...init, redirect: "manual", signal: AbortSignal.timeout(timeoutMs) });
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const reason = (error as Error).name === "TimeoutError" ? `no answer within ${timeoutMs / 1000} s` : (cause?.code ?? cause?.message ?? (error as Error).message);
    throw new CommandError(`cannot reach ${api}: ${reason}`);
  }
}

/** A form body (application/x-www-form-urlencoded) of the fields that are defined. */
export function form(fields: Record<string, string | undefined>): URLSearchParams {
  return new URLSearchParams(Object.entries(fields).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

/** An answer's JSON body, or undefined when it has none or it is not JSON. */
export async function jsonOf(response: Response): Promise<unknown> {
  const text = await response.text().catch(() => "");
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * What an error answer says: the `message` of a google.rpc.Status, the `error_description` (else
 * `error`) of an OAuth error, else the HTTP status.
 */
export function errorMessageOf(response: Response, body: unknown): string {
  const fields = (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>;
  for (const key of ["message", "error_description", "error"]) {
    if (typeof fields[key] === "string" && fields[key] !== "") return fields[key];
  }
  return `${response.status} ${response.statusText}`.trim();
}

/** The JSON body of a 2xx answer; throws CommandError with the answer's message otherwise. */
export async function okJson(api: string, response: Response): Promise<unknown> {
  const body = await jsonOf(response);
  if (!response.ok) throw new CommandError(`${api}: ${errorMessageOf(response, body)}`);
  if (body === undefined) throw new CommandError(`${api}: the answer to ${new URL(response.url || api).pathname} is not JSON`);
  return body;
}
