import { create } from "@bufbuild/protobuf";
import { durationFromMs, durationMs } from "@bufbuild/protobuf/wkt";
import { UpstreamSchema, type Upstream } from "../../../gen/platform/registry/v2/upstream_pb.js";
import { toTimestamp } from "../../aip/time.js";
import { patternsOf, type UpstreamRow } from "./store/upstreams.js";
import { DEFAULT_TAG_FRESHNESS_MS } from "./upstream-validation.js";

/** The message of a stored upstream; its password is never answered (`has_password` says whether there is one). */
export function upstreamFromRow(row: UpstreamRow): Upstream {
  return create(UpstreamSchema, {
    uid: row.uid,
    name: row.name,
    url: row.url,
    repoPrefix: row.repo_prefix,
    upstreamPrefix: row.upstream_prefix,
    username: row.username,
    hasPassword: row.password !== "",
    tagFreshness: durationFromMs(row.tag_freshness_ms),
    includeRepos: patternsOf(row.include_repos),
    excludeRepos: patternsOf(row.exclude_repos),
    createTime: toTimestamp(row.create_time),
    updateTime: toTimestamp(row.update_time),
  });
}

/** The columns of an upstream's settings (checked by `checkUpstreamFields`), with the password as sealed. */
export function upstreamColumns(upstream: Upstream, sealedPassword: string): Pick<UpstreamRow, "name" | "url" | "upstream_prefix" | "username" | "password" | "tag_freshness_ms" | "include_repos" | "exclude_repos"> {
  return {
    name: upstream.name,
    url: upstream.url.replace(/\/+$/, ""),
    upstream_prefix: upstream.upstreamPrefix,
    username: upstream.username,
    password: sealedPassword,
    tag_freshness_ms: upstream.tagFreshness ? durationMs(upstream.tagFreshness) : DEFAULT_TAG_FRESHNESS_MS,
    include_repos: JSON.stringify(upstream.includeRepos),
    exclude_repos: JSON.stringify(upstream.excludeRepos),
  };
}
