import { durationMs } from "@bufbuild/protobuf/wkt";
import type { Upstream } from "../../../gen/platform/registry/v2/upstream_pb.js";
import type { Violations } from "../../aip/validation.js";
import { checkOutboundUrl, OutboundFetchError } from "../../outbound/fetch.js";

/** A tag's freshness when none is given: 5 minutes. */
export const DEFAULT_TAG_FRESHNESS_MS = 5 * 60_000;
const MIN_FRESHNESS_MS = 1000;
const MAX_FRESHNESS_MS = 30 * 86_400_000;
/** The most include or exclude patterns. */
export const MAX_REPO_PATTERNS = 32;
/** Name components (as repo names have them), each followed by `/`. */
const PREFIX = /^(?:[a-z0-9]+(?:[._-][a-z0-9]+)*\/)+$/;
/** A repo pattern: the repo name alphabet, `/`, and `*` for any run of characters. */
const REPO_PATTERN = /^[a-z0-9._\/*-]{1,255}$/;

/** The fields UpdateUpstream may change. */
export const UPSTREAM_UPDATABLE = ["name", "url", "upstream_prefix", "username", "password", "tag_freshness", "include_repos", "exclude_repos"];

/** Which upstream URLs the server may fetch from (`serve --allow-http-upstreams`, `--allow-private-upstreams`). */
export interface UpstreamUrlPolicy {
  allowHttp: boolean;
  allowPrivateAddresses: boolean;
}

/** Adds a violation for each field of `upstream` out of its rules (Upstream in the proto); `passwordKept`: an empty password keeps a stored one. */
export function checkUpstreamFields(violations: Violations, upstream: Upstream, policy: UpstreamUrlPolicy, prefix = "upstream."): void {
  violations.name(`${prefix}name`, upstream.name, { required: true, max: 128 });
  checkUrl(violations, `${prefix}url`, upstream.url, policy);
  checkPrefix(violations, `${prefix}repo_prefix`, upstream.repoPrefix, true);
  checkPrefix(violations, `${prefix}upstream_prefix`, upstream.upstreamPrefix, false);
  violations.text(`${prefix}username`, upstream.username, { max: 256, pattern: /^[^:]*$/ });
  violations.text(`${prefix}password`, upstream.password, { max: 1024 });
  if (upstream.password !== "" && upstream.username === "") violations.add(`${prefix}password`, "needs a username");
  if (upstream.tagFreshness !== undefined) {
    const ms = durationMs(upstream.tagFreshness);
    if (!(ms >= MIN_FRESHNESS_MS && ms <= MAX_FRESHNESS_MS)) violations.add(`${prefix}tag_freshness`, "must be at least 1 second and at most 30 days, or unset (5 minutes)");
  }
  checkPatterns(violations, `${prefix}include_repos`, upstream.includeRepos);
  checkPatterns(violations, `${prefix}exclude_repos`, upstream.excludeRepos);
}

function checkUrl(violations: Violations, field: string, value: string, policy: UpstreamUrlPolicy): void {
  if (value === "") return void violations.add(field, "is required");
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return void violations.add(field, "must be a URL: https://host[:port]");
  }
  if (url.pathname.replace(/\/+$/, "") !== "" || url.search !== "" || url.hash !== "") return void violations.add(field, "must be the registry's base URL, https://host[:port], without a path, query or fragment");
  try {
    checkOutboundUrl(url, { ...policy, relaxedBy: { http: "serve --allow-http-upstreams", privateAddresses: "serve --allow-private-upstreams" } });
  } catch (error) {
    if (!(error instanceof OutboundFetchError)) throw error;
    violations.add(field, `is not a URL this server may fetch from: ${error.message}`);
  }
}

function checkPrefix(violations: Violations, field: string, value: string, required: boolean): void {
  if (value === "") {
    if (required) violations.add(field, "is required");
    return;
  }
  if (value.length > 200 || !PREFIX.test(value)) violations.add(field, "must be repo name components each followed by / (mirror/, cache/hub/), at most 200 characters");
}

function checkPatterns(violations: Violations, field: string, patterns: readonly string[]): void {
  if (patterns.length > MAX_REPO_PATTERNS) violations.add(field, `must hold at most ${MAX_REPO_PATTERNS} patterns`);
  patterns.forEach((pattern, i) => {
    if (!REPO_PATTERN.test(pattern)) violations.add(`${field}[${i}]`, "must be 1 to 255 characters among a-z 0-9 . _ - / and * (any run of characters)");
  });
}
