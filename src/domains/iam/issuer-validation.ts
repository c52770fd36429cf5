import type { Violations } from "../../aip/validation.js";

/** Longest issuer URL. */
export const MAX_ISSUER_URL = 2048;

/**
 * Checks an OIDC issuer's URL (spec 2: the issuer's URL; 7.1: bad input is INVALID_ARGUMENT on
 * `field`): an absolute `https://` URL without credentials, query, fragment or whitespace, at
 * most 2048 characters. `allowHttp` also admits `http://`; `httpAllowedBy` names the setting
 * that would (told to a caller whose http URL is refused). The empty string is "is required"
 * unless `required` is false.
 */
export function checkIssuerUrl(
  violations: Violations,
  field: string,
  value: string,
  opts: { allowHttp: boolean; httpAllowedBy?: string; required?: boolean },
): void {
  if (value === "") {
    if (opts.required ?? true) violations.add(field, "is required");
    return;
  }
  if (value.length > MAX_ISSUER_URL) {
    violations.add(field, `must be at most ${MAX_ISSUER_URL} characters`);
    return;
  }
  const wanted = opts.allowHttp ? "an https or http URL" : "an https URL";
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    violations.add(field, `must be ${wanted}`);
    return;
  }
  if (url.protocol === "http:" && !opts.allowHttp) {
    violations.add(field, opts.httpAllowedBy ? `must be an https URL (plain http only where the operator allows it: ${opts.httpAllowedBy})` : "must be an https URL");
  } else if (url.protocol !== "https:" && url.protocol !== "http:") {
    violations.add(field, `must be ${wanted}`);
  } else if (url.username !== "" || url.password !== "" || url.search !== "" || url.hash !== "" || /\s/.test(value)) {
    violations.add(field, `must be ${wanted} without credentials, query or fragment`);
  }
}
