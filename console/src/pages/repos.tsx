import { timestampDate } from "@bufbuild/protobuf/wkt";
import { useEffect, useState } from "preact/hooks";
import type { Repo } from "../../../gen/platform/registry/v2/repo_pb.js";
import type { Tag } from "../../../gen/platform/registry/v2/tag_pb.js";
import type { TagHistory } from "../../../gen/platform/registry/v1/registry_pb.js";
import { Vulnerability_Severity, type VulnerabilityReport } from "../../../gen/platform/registry/v2/images_service_pb.js";
import { api } from "../api.js";

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
  return (
    <section aria-labelledby="repo-name">
      <nav aria-label="Breadcrumbs" class="crumbs">
        <a href={`#/groups/${uid.split("/").slice(0, -1).join("/")}`}>Group</a> / {repo?.name ?? "…"}
      </nav>
      <h1 id="repo-name">{repo?.name ?? "…"}</h1>
      <label class="inline">
        <input type="checkbox" checked={all} onChange={(e) => setAll(e.currentTarget.checked)} /> Show date, epoch and referrer tags
      </label>
      <table>
        <caption>Tags</caption>
        <thead>
          <tr>
            <th scope="col">Tag</th>
            <th scope="col">Digest</th>
            <th scope="col">Image</th>
          </tr>
        </thead>
        <tbody>
          {tags.map((t) => (
            <tr key={t.uid}>
              <td>
                <a href={`#/tags/${t.uid}`}>{t.name}</a>
              </td>
              <td>
                <code>{short(t.digest)}</code>
              </td>
              <td>
                <a href={`#/reports/${uid}@${t.digest}`} aria-label={`Vulnerability report of ${t.name}`}>
                  Vulnerabilities
                </a>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
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
      <table>
        <caption>Vulnerabilities and their fixes</caption>
        <thead>
          <tr>
            <th scope="col">Advisory</th>
            <th scope="col">Package</th>
            <th scope="col">Installed</th>
            <th scope="col">Fixed in</th>
            <th scope="col">Severity</th>
          </tr>
        </thead>
        <tbody>
          {(report?.vulnerabilities ?? []).map((v) => (
            <tr key={`${v.advisoryId} ${v.package}`}>
              <td>{v.advisoryId}</td>
              <td>{v.packageName || v.package}</td>
              <td>{v.installedVersion}</td>
              <td>{v.fixedVersion || "no fix yet"}</td>
              <td>{SEVERITIES.find(([, s]) => s === v.severity)?.[0] ?? "unknown"}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
