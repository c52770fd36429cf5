import type { FieldViolation } from "../../aip/errors.js";
import { isUidp } from "../../aip/uidp.js";
import { sameUrl } from "../http/credentials.js";
import { capabilityName, capabilityOfString } from "../../access/capabilities.js";
import type { TokenRestriction } from "../../access/token-restriction.js";

/**
 * The parameters both token endpoints take, as the hosted service's ExchangeRequest and
 * ExchangeRefreshTokenRequest name them (query or form, `GET` or `POST`):
 * - `aud`, repeatable: the token's audiences, each the API's or the registry's public URL (default the API's);
 * - `cap`, repeatable: capabilities (`registry.pull` or `CAP_REGISTRY_PULL`) the token is narrowed to;
 * - `scopes`, repeatable, and `scope` (deprecated, one): group uids the token is narrowed to.
 * Narrowing never widens: the token may do what its identity may, within these.
 */
export interface TokenRequest {
  audiences: string[];
  /** Undefined when neither `cap` nor `scope(s)` was given. */
  restriction?: TokenRestriction;
  /** The endpoint's own parameters (`identity`, `identity_provider`), each given at most once. */
  own: Map<string, string>;
}

const SHARED = new Set(["aud", "cap", "scope", "scopes"]);

/**
 * Reads a token request from `sources` (the query, then a form body). Returns the violations
 * instead of throwing, each naming its parameter: an unknown parameter, one of `own` given twice,
 * an audience this server does not issue for, an unknown capability, a scope that is no group uid.
 */
export function readTokenRequest(sources: URLSearchParams[], own: readonly string[], hosts: { apiUrl: string; registryUrl: string }): { request: TokenRequest; violations: FieldViolation[] } {
  const violations: FieldViolation[] = [];
  const request: TokenRequest = { audiences: [], own: new Map() };
  const caps: string[] = [];
  const scopes: string[] = [];
  let capsGiven = false;
  let scopesGiven = false;
  const expected = [...own, ...SHARED].join(", ");
  for (const source of sources) {
    for (const [name, value] of source) {
      if (own.includes(name)) {
        if (request.own.has(name)) violations.push({ field: name, description: "given more than once" });
        else request.own.set(name, value);
      } else if (name === "aud") {
        const audience = [hosts.apiUrl, hosts.registryUrl].find((url) => sameUrl(url, value));
        if (audience === undefined) violations.push({ field: "aud", description: `must be ${hosts.apiUrl} or ${hosts.registryUrl}` });
        else if (!request.audiences.includes(audience)) request.audiences.push(audience);
      } else if (name === "cap") {
        capsGiven = true;
        for (const one of value.split(",").filter((v) => v !== "")) {
          const cap = capabilityOfString(one.trim());
          if (cap === undefined) violations.push({ field: "cap", description: `"${one.slice(0, 64)}" is no capability` });
          else if (!caps.includes(capabilityName(cap))) caps.push(capabilityName(cap));
        }
      } else if (name === "scope" || name === "scopes") {
        scopesGiven = true;
        for (const one of value.split(/[ ,]/).filter((v) => v !== "")) {
          const shown = one.slice(0, 64);
          if (!isUidp(one)) violations.push({ field: name, description: `"${shown}" is no group uid` });
          else if (!scopes.includes(one)) scopes.push(one);
        }
      } else {
        violations.push({ field: name.slice(0, 64), description: `Unknown name "${name.slice(0, 64)}": expected ${expected}` });
      }
    }
  }
  if (request.audiences.length === 0) request.audiences.push(hosts.apiUrl);
  if (capsGiven || scopesGiven) request.restriction = { ...(capsGiven ? { caps } : {}), ...(scopesGiven ? { scopes } : {}) };
  return { request, violations };
}
