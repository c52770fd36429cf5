import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { useEffect, useState } from "preact/hooks";
import type { Repo } from "../../../gen/platform/registry/v2/repo_pb.js";
import type { Tag } from "../../../gen/platform/registry/v2/tag_pb.js";
import type { TagHistory } from "../../../gen/platform/registry/v1/registry_pb.js";
import { Vulnerability_Severity, type Vulnerability, type VulnerabilityReport } from "../../../gen/platform/registry/v2/images_service_pb.js";
import type { ResolvedVulnsReport } from "../../../gen/platform/advisory/v2/security_advisory_service_pb.js";
import { api } from "../api.js";
import { columns, Table } from "../table.js";

type OnError = { onError: (error: unknown) => void };

/** The repos of a group, for its page. */
export function RepoList({ group, onError }: { group: string } & OnError) {
  const [repos, setRepos] = useState<Repo[]>([]);
  useEffect(() => {
    api.repos.listRepos({ uidp: { childrenOf: group }, orderBy: "name", pageSize: 100 }).then((r) => setRepos(r.repos), onError);
  }, [group]);
  if (repos.length === 0) return null;
  return (
    <>
      <h2>Repositories</h2>
      <ul class="list">
        {repos.map((r) => (
          <li key={r.uid}>
            <a href={`#/repos/${r.uid}`}>{r.name}</a>
          </li>
        ))}
      </ul>
    </>
  );
}

const short = (digest: string) => digest.replace(/^sha256:/, "").slice(0, 12);

/** Bytes in the unit registries show them in (decimal: kB, MB, GB). */
function bytesOf(size: bigint): string {
  const n = Number(size);
  const [unit, scale] = n >= 1e9 ? ["GB", 1e9] : n >= 1e6 ? ["MB", 1e6] : n >= 1e3 ? ["kB", 1e3] : ["B", 1];
  return unit === "B" ? `${n} B` : `${(n / scale).toFixed(1)} ${unit}`;
}

/** What the tags table shows of an image: its architectures and each one's size. */
interface ImageFacts {
  architectures: string;
  size: string;
}

/** Images the tags table shows at most: one call per image and one per architecture each. */
const MAX_IMAGES = 50;

/** The architectures and sizes of the distinct images `tags` point at, by digest, filled in as they arrive. */
function useImages(repoUid: string, tags: Tag[]): Record<string, ImageFacts> {
  const [facts, setFacts] = useState<Record<string, ImageFacts>>({});
  const digests = [...new Set(tags.map((t) => t.digest))].slice(0, MAX_IMAGES);
  useEffect(() => {
    let live = true;
    for (const digest of digests) {
      api.images
        .getImageArchitectures({ repoUid, digest })
        .then(async ({ architectures }) => {
          const sizes = await Promise.all(architectures.map((architecture) => api.images.getImageSize({ repoUid, digest, architecture: architectures.length > 1 ? architecture : "" })));
          return { architectures: architectures.join(", ") || "unknown", size: sizes.map((s) => (sizes.length > 1 ? `${s.architecture} ${bytesOf(s.size)}` : bytesOf(s.size))).join(", ") };
        })
        // An image the registry cannot describe (a foreign media type, say) still lists its tag.
        .catch(() => ({ architectures: "unknown", size: "unknown" }))
        .then((image) => live && setFacts((known) => ({ ...known, [digest]: image })));
    }
    return () => void (live = false);
  }, [repoUid, digests.join(" ")]);
  return facts;
}

/** Days shown of the vulnerabilities a repo's tag moves resolved. */
const RESOLVED_DAYS = 30;

/** Per day, the vulnerabilities the repo's tag moves resolved: a bar per day, then each tag's move. */
function ResolvedPerDay({ repoUid, onError }: { repoUid: string } & OnError) {
  const [reports, setReports] = useState<ResolvedVulnsReport[]>([]);
  const resolving = reports.filter((r) => r.resolvedVulns.length > 0);
  useEffect(() => {
    const since = new Date(Date.now() - RESOLVED_DAYS * 86_400_000);
    api.advisoryReports
      .listResolvedVulnsReports({ uidp: { childrenOf: repoUid }, startTime: timestampFromDate(since), orderBy: "date desc, tag", pageSize: 200 })
      .then((r) => setReports(r.resolvedVulnsReports), onError);
  }, [repoUid]);
  const day = (r: ResolvedVulnsReport) => (r.date ? timestampDate(r.date).toISOString().slice(0, 10) : "");
  const perDay = [...reports.reduce((days, r) => days.set(day(r), (days.get(day(r)) ?? 0) + r.resolvedVulns.length), new Map<string, number>())];
  const most = Math.max(1, ...perDay.map(([, n]) => n));
  return (
    <>
      <h2>Resolved vulnerabilities, last {RESOLVED_DAYS} days</h2>
      {perDay.length === 0 ? <p>No tag move resolved a vulnerability in these days.</p> : null}
      <dl class="bars" aria-label="Resolved vulnerabilities per day">
        {perDay.map(([date, count]) => (
          <div key={date} class="bar-row">
            <dt>
              <time dateTime={date}>{date}</time>
            </dt>
            <dd>
              <span class="bar low" style={{ width: `${(count / most) * 100}%` }} />
              <span class="count">{count}</span>
            </dd>
          </div>
        ))}
      </dl>
      {resolving.length > 0 ? (
        <Table
          caption="Tag moves that resolved vulnerabilities"
          rows={resolving}
          rowKey={(r) => r.uid}
          columns={columns<ResolvedVulnsReport>(
            ["Day", day],
            ["Tag", (r) => r.tag],
            [
              "Moved",
              (r) => (
                <>
                  <code>{short(r.fromDigest)}</code> → <code>{short(r.toDigest)}</code>
                </>
              ),
            ],
            ["Resolved", (r) => r.resolvedVulns.map((v) => v.id).join(", ")],
          )}
        />
      ) : null}
    </>
  );
}

/** A repo: its tags (dates, epochs and referrers behind a toggle), each with its history and report. */
export function RepoPage({ uid, onError }: { uid: string } & OnError) {
  const [repo, setRepo] = useState<Repo>();
  const [tags, setTags] = useState<Tag[]>([]);
  const [all, setAll] = useState(false);
  useEffect(() => {
    api.repos.getRepo({ uid }).then(setRepo, onError);
  }, [uid]);
  useEffect(() => {
    api.tags
      .listTags({ uidp: { childrenOf: uid }, orderBy: "name", pageSize: 200, includeReferrers: all, includeDates: all, includeEpochs: all })
      .then((r) => setTags(r.tags), onError);
  }, [uid, all]);
  const images = useImages(uid, tags);
  return (
    <section aria-labelledby="repo-name">
      <nav aria-label="Breadcrumbs" class="crumbs">
        <a href={`#/groups/${uid.split("/").slice(0, -1).join("/")}`}>Group</a> / {repo?.name ?? "…"}
      </nav>
      <h1 id="repo-name">{repo?.name ?? "…"}</h1>
      <label class="inline">
        <input type="checkbox" checked={all} onChange={(e) => setAll(e.currentTarget.checked)} /> Show date, epoch and referrer tags
      </label>
      <Table
        caption="Tags"
        rows={tags}
        rowKey={(t) => t.uid}
        empty="No tags."
        columns={columns<Tag>(
          ["Tag", (t) => <a href={`#/tags/${t.uid}`}>{t.name}</a>],
          ["Digest", (t) => <code>{short(t.digest)}</code>],
          ["Architectures", (t) => images[t.digest]?.architectures ?? "…"],
          ["Size", (t) => images[t.digest]?.size ?? "…"],
          [
            "Image",
            (t) => (
              <a href={`#/reports/${uid}@${t.digest}`} aria-label={`Vulnerability report of ${t.name}`}>
                Vulnerabilities
              </a>
            ),
          ],
        )}
      />
      <ResolvedPerDay repoUid={uid} onError={onError} />
    </section>
  );
}

/** A tag's history, newest first: each digest it pointed at, with the pinned reference to copy. */
export function TagPage({ uid, onError }: { uid: string } & OnError) {
  const [tag, setTag] = useState<Tag>();
  const [repo, setRepo] = useState<Repo>();
  const [history, setHistory] = useState<TagHistory[]>([]);
  const [copied, setCopied] = useState("");
  const repoUid = uid.split("/").slice(0, -1).join("/");
  useEffect(() => {
    api.tags.getTag({ uid }).then(setTag, onError);
    api.repos.getRepo({ uid: repoUid }).then(setRepo, onError);
    api.registryV1.listTagHistory({ parentId: uid }).then((h) => setHistory([...h.items].reverse()), onError);
  }, [uid]);
  const copy = async (reference: string) => {
    await navigator.clipboard.writeText(reference);
    setCopied(reference);
  };
  return (
    <section aria-labelledby="tag-name">
      <nav aria-label="Breadcrumbs" class="crumbs">
        <a href={`#/repos/${repoUid}`}>{repo?.name ?? "…"}</a> / {tag?.name ?? "…"}
      </nav>
      <h1 id="tag-name">
        {repo?.name ?? "…"}:{tag?.name ?? "…"}
      </h1>
      <h2>History</h2>
      <ol class="timeline">
        {history.map((h, i) => {
          const reference = `${repo?.name ?? ""}@${h.digest}`;
          return (
            <li key={`${h.digest}-${i}`}>
              <time dateTime={h.updateTimestamp ? timestampDate(h.updateTimestamp).toISOString() : ""}>
                {h.updateTimestamp ? timestampDate(h.updateTimestamp).toLocaleString() : ""}
              </time>{" "}
              <code>{short(h.digest)}</code> {i === 0 ? <strong>current</strong> : null}{" "}
              <button type="button" onClick={() => void copy(reference)} aria-label={`Copy ${reference}`}>
                Copy pinned reference
              </button>
            </li>
          );
        })}
      </ol>
      <p role="status" class="notice">
        {copied ? `Copied ${copied}` : ""}
      </p>
    </section>
  );
}

const SEVERITIES = [
  ["critical", Vulnerability_Severity.CRITICAL],
  ["high", Vulnerability_Severity.HIGH],
  ["medium", Vulnerability_Severity.MEDIUM],
  ["low", Vulnerability_Severity.LOW],
  ["unknown", Vulnerability_Severity.UNKNOWN],
] as const;

/** An image's vulnerability report: counts by severity as a chart, then each vulnerability and its fix. */
export function ReportPage({ repoUid, digest, onError }: { repoUid: string; digest: string } & OnError) {
  const [report, setReport] = useState<VulnerabilityReport>();
  useEffect(() => {
    api.images.getVulnerabilityReport({ repoUid, digest }).then(setReport, onError);
  }, [repoUid, digest]);
  const counts = report?.counts;
  const most = Math.max(1, ...SEVERITIES.map(([name]) => counts?.[name] ?? 0));
  return (
    <section aria-labelledby="report">
      <nav aria-label="Breadcrumbs" class="crumbs">
        <a href={`#/repos/${repoUid}`}>Repository</a> / <code>{short(digest)}</code>
      </nav>
      <h1 id="report">Vulnerabilities</h1>
      <p>
        {report ? `${report.packageCount} packages; report ${report.status === 2 ? "done" : report.status === 1 ? "pending" : "failed"}` : "…"}
        {report?.reason ? `: ${report.reason}` : ""}
      </p>
      <figure>
        <figcaption>By severity</figcaption>
        <dl class="bars">
          {SEVERITIES.map(([name]) => (
            <div key={name} class="bar-row">
              <dt>{name}</dt>
              <dd>
                <span class={`bar ${name}`} style={{ width: `${((counts?.[name] ?? 0) / most) * 100}%` }} />
                <span class="count">{counts?.[name] ?? 0}</span>
              </dd>
            </div>
          ))}
        </dl>
      </figure>
      <Table
        caption="Vulnerabilities and their fixes"
        rows={report?.vulnerabilities ?? []}
        rowKey={(v) => `${v.advisoryId} ${v.package}`}
        empty={report?.status === 2 ? "No known vulnerability." : "None yet."}
        columns={columns<Vulnerability>(
          ["Advisory", (v) => v.advisoryId],
          ["Package", (v) => v.packageName || v.package],
          ["Installed", (v) => v.installedVersion],
          ["Fixed in", (v) => v.fixedVersion || "no fix yet"],
          ["Severity", (v) => SEVERITIES.find(([, s]) => s === v.severity)?.[0] ?? "unknown"],
        )}
      />
    </section>
  );
}
