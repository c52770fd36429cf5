import { timestampDate } from "@bufbuild/protobuf/wkt";
import { useEffect, useState } from "preact/hooks";
import type { Advisory, AdvisoryEvent } from "../../../gen/platform/vulnerabilities/v2/advisory_pb.js";
import { api } from "../api.js";
import { columns, Table } from "../table.js";

/** One affected range in words: `from 0.10.0 until 0.10.55` (a `fixed` excluded, a `last_affected` included). */
function rangeOf(events: AdvisoryEvent[]): string {
  return events
    .map(({ event }) => {
      switch (event.case) {
        case "introduced":
          return `from ${event.value}`;
        case "fixed":
          return `until ${event.value} (fixed)`;
        case "lastAffected":
          return `through ${event.value}`;
        case "limit":
          return `limited to below ${event.value}`;
        default:
          return "";
      }
    })
    .filter(Boolean)
    .join(" ");
}

/** The affected ranges of an advisory: its events grouped by range, in order. */
function rangesOf(advisory: Advisory): Array<{ index: number; type: string; text: string }> {
  const ranges = new Map<number, AdvisoryEvent[]>();
  for (const event of advisory.events) ranges.set(event.rangeIndex, [...(ranges.get(event.rangeIndex) ?? []), event]);
  return [...ranges].map(([index, events]) => ({ index, type: events[0]?.rangeType ?? "", text: rangeOf(events) }));
}

/** An advisory: what it affects, its ranges and fixes, its severities and aliases. */
export function AdvisoryPage({ uid, onError }: { uid: string; onError: (error: unknown) => void }) {
  const [advisory, setAdvisory] = useState<Advisory>();
  useEffect(() => {
    api.advisories.getAdvisory({ uid }).then(setAdvisory, onError);
  }, [uid]);
  if (!advisory) return <p>Loading…</p>;
  const when = (t: typeof advisory.createTime) => (t ? timestampDate(t).toISOString().slice(0, 10) : "unknown");
  return (
    <section aria-labelledby="advisory">
      <nav aria-label="Breadcrumbs" class="crumbs">
        <a href="#/advisories">Advisories</a> / {advisory.advisoryId}
      </nav>
      <h1 id="advisory">{advisory.advisoryId}</h1>
      <p>{advisory.summary}</p>
      <dl class="facts">
        <dt>Package</dt>
        <dd>
          {advisory.artifactName} ({advisory.ecosystem})
        </dd>
        <dt>Aliases</dt>
        <dd>{advisory.aliases.join(", ") || "none"}</dd>
        <dt>Published</dt>
        <dd>{when(advisory.createTime)}</dd>
        <dt>Modified</dt>
        <dd>{when(advisory.updateTime)}</dd>
        {advisory.versions.length > 0 ? (
          <>
            <dt>Versions listed</dt>
            <dd>{advisory.versions.join(", ")}</dd>
          </>
        ) : null}
      </dl>
      <Table
        caption="Affected ranges"
        rows={rangesOf(advisory)}
        rowKey={(r) => String(r.index)}
        empty="Only the versions listed."
        columns={columns<{ index: number; type: string; text: string }>(
          ["Type", (r) => r.type],
          ["Affected", (r) => r.text],
        )}
      />
      <Table
        caption="Severities"
        rows={advisory.severities}
        rowKey={(s) => `${s.osvType} ${s.score}`}
        empty="No severity is given."
        columns={columns<Advisory["severities"][number]>(
          ["Kind", (s) => s.osvType],
          ["Score", (s) => <code>{s.score}</code>],
          ["Base score", (s) => (s.baseScore === undefined ? "" : s.baseScore.toFixed(1))],
        )}
      />
    </section>
  );
}
