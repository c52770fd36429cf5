import type { Identity } from "../../../gen/platform/iam/v2/identity_pb.js";
import type { Violations } from "../../aip/validation.js";
import { patternProblem } from "../../access/claim-pattern.js";
import { checkIssuerUrl } from "./issuer-validation.js";

const MAX_VALUE = 1024;
const MAX_CLAIMS = 32;
const MAX_JWKS = 64 * 1024;

/** An RE2 pattern the token exchange accepts (src/access/claim-pattern.ts); matched against the whole value. */
function pattern(violations: Violations, field: string, value: string): void {
  if (value === "") return;
  violations.text(field, value, { max: MAX_VALUE });
  const problem = patternProblem(value);
  if (problem !== undefined) violations.add(field, problem);
}

/**
 * Exactly one of an exact value and a pattern (or at most one when not required). The exact
 * value is checked by `checkExact` when given, else as text.
 */
function pair(
  violations: Violations,
  prefix: string,
  exact: [string, string],
  pat: [string, string],
  required: boolean,
  checkExact?: (field: string, value: string) => void,
): void {
  const [exactName, exactValue] = exact;
  const [patName, patValue] = pat;
  if (exactValue !== "" && patValue !== "") {
    violations.add(`${prefix}${patName}`, `cannot be set together with ${exactName}`);
  } else if (required && exactValue === "" && patValue === "") {
    violations.add(`${prefix}${exactName}`, `is required (or ${patName})`);
  }
  if (checkExact) checkExact(`${prefix}${exactName}`, exactValue);
  else violations.text(`${prefix}${exactName}`, exactValue, { max: MAX_VALUE });
  pattern(violations, `${prefix}${patName}`, patValue);
}

function claimMap(violations: Violations, field: string, map: Record<string, string>, patterns: boolean): void {
  const entries = Object.entries(map);
  if (entries.length > MAX_CLAIMS) violations.add(field, `must hold at most ${MAX_CLAIMS} claims`);
  for (const [key, value] of entries) {
    const entry = `${field}[${JSON.stringify(key)}]`;
    if (key === "" || key.length > 128) violations.add(entry, "claim names must be 1 to 128 characters");
    if (value === "") violations.add(entry, "is required");
    else if (patterns) pattern(violations, entry, value);
    else violations.text(entry, value, { max: MAX_VALUE });
  }
}

function isJwks(json: string): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return "must be a JWKS as JSON text";
  }
  const keys = (value as { keys?: unknown } | null)?.keys;
  if (typeof value !== "object" || value === null || !Array.isArray(keys) || keys.length === 0) {
    return 'must be a JWKS: {"keys": [...]} with at least one key';
  }
  if (!keys.every((k) => typeof k === "object" && k !== null && typeof (k as { kty?: unknown }).kty === "string")) {
    return "every key must be a JWK object with a kty";
  }
  return undefined;
}

/**
 * How issuers are judged: `allowHttp` is the operator's `serve --allow-http-issuers`; an issuer
 * equal to `kept` (the stored one, on an update) is not judged again, so a change elsewhere is
 * not refused for an issuer written under another setting.
 */
export interface IssuerRule {
  allowHttp: boolean;
  kept?: string;
}

/**
 * Checks an identity's writable fields (names as `identity.<field>`). A claim match's `issuer`
 * and a static keys' `issuer` are issuer URLs (`checkIssuerUrl`, by `issuers`).
 */
export function checkIdentityFields(violations: Violations, identity: Identity, issuers: IssuerRule, prefix = "identity."): void {
  const issuer = (field: string, value: string, required: boolean) => {
    if (value !== "" && value === issuers.kept) return;
    checkIssuerUrl(violations, field, value, { allowHttp: issuers.allowHttp, httpAllowedBy: "serve --allow-http-issuers", required });
  };
  violations.name(`${prefix}name`, identity.name, { required: true, max: 128 });
  violations.description(`${prefix}description`, identity.description);
  const rel = identity.relationship;
  if (rel.case === "claimMatch") {
    const m = rel.value;
    const p = `${prefix}claim_match.`;
    pair(violations, p, ["issuer", m.issuer], ["issuer_pattern", m.issuerPattern], true, (field, value) => issuer(field, value, false));
    pair(violations, p, ["subject", m.subject], ["subject_pattern", m.subjectPattern], true);
    pair(violations, p, ["audience", m.audience], ["audience_pattern", m.audiencePattern], false);
    claimMap(violations, `${p}claims`, m.claims, false);
    claimMap(violations, `${p}claim_patterns`, m.claimPatterns, true);
  } else if (rel.case === "staticKeys") {
    const k = rel.value;
    const p = `${prefix}static_keys.`;
    issuer(`${p}issuer`, k.issuer, true);
    violations.text(`${p}subject`, k.subject, { required: true, max: MAX_VALUE });
    if (k.issuerKeys === "") violations.add(`${p}issuer_keys`, "is required");
    else if (k.issuerKeys.length > MAX_JWKS) violations.add(`${p}issuer_keys`, `must be at most ${MAX_JWKS} characters`);
    else {
      const problem = isJwks(k.issuerKeys);
      if (problem) violations.add(`${p}issuer_keys`, problem);
    }
  }
}
