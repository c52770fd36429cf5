import { HISTORY_LIMIT } from "../../src/transport/oci/tag-history-endpoint.js";

/**
 * The Tag History figure's data, the same in every process: the platform
 * server seeds it, the plain node:http baseline answers it precomputed, and
 * the bench verifies both answers against it.
 */

/** The organization `platform.ts` bootstraps: the registry path's first segment. */
export const ORGANIZATION_NAME = "bench";
/** The repo whose tag has the long history, and the tag. */
export const HISTORY_IMAGE = "app";
export const HISTORY_TAG = "latest";
/** Records seeded: more than one answer holds, so the read stops at the limit as a busy tag's does. */
export const HISTORY_RECORDS = 1_200;
/** Records one answer holds (the registry's limit). */
export const HISTORY_ANSWERED = Math.min(HISTORY_RECORDS, HISTORY_LIMIT);
/** `<organization>/<image>`, as the registry names the repo. */
export const HISTORY_REPOSITORY = `${ORGANIZATION_NAME}/${HISTORY_IMAGE}`;
/** `GET` this on the registry host (and on the baseline). */
export const HISTORY_PATH = `/v2/${HISTORY_REPOSITORY}/_service/history/${HISTORY_TAG}`;

const T0 = Date.UTC(2026, 0, 1);
const MINUTE = 60_000;

/** The n-th digest (from 0) a bench tag points to. */
export const digestOf = (n: number) => `sha256:${n.toString(16).padStart(64, "0")}`;

/** When the history tag moved to its n-th digest (from 0), epoch ms: one move a minute. */
export const historyTime = (n: number) => T0 + n * MINUTE;

/** The body the registry answers for HISTORY_PATH without start or end: the oldest HISTORY_ANSWERED records. */
export function historyBody(): string {
  const history = Array.from({ length: HISTORY_ANSWERED }, (_, n) => ({ updateTimestamp: new Date(historyTime(n)).toISOString(), digest: digestOf(n) }));
  return JSON.stringify({ history });
}
