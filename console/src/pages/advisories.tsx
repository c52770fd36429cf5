import { useState } from "preact/hooks";
import type { Advisory } from "../../../gen/platform/vulnerabilities/v2/advisory_pb.js";
import { api } from "../api.js";
import { columns, Table } from "../table.js";

/** Advisories by package (with an ecosystem and version, those that affect it), or by id or alias. */
export function AdvisoriesPage({ onError }: { onError: (error: unknown) => void }) {
  const [name, setName] = useState("");
  const [ecosystem, setEcosystem] = useState("");
  const [version, setVersion] = useState("");
  const [id, setId] = useState("");
  const [found, setFound] = useState<Advisory[] | undefined>();

  const search = (event: Event) => {
    event.preventDefault();
    api.advisories
      .listAdvisories({
        artifactNames: name ? [name] : [],
        ecosystem,
        version,
        advisoryIds: id ? [id] : [],
        pageSize: 100,
      })
      .then((r) => setFound(r.advisories), onError);
  };
  const fixes = (a: Advisory) => a.events.flatMap((e) => (e.event.case === "fixed" ? [e.event.value] : [])).join(", ");

  return (
    <section aria-labelledby="advisories">
      <h1 id="advisories">Advisories</h1>
      <form class="row" onSubmit={search}>
        <label>
          Package <input value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <label>
          Ecosystem <input value={ecosystem} onInput={(e) => setEcosystem(e.currentTarget.value)} placeholder="crates.io" />
        </label>
        <label>
          Version <input value={version} onInput={(e) => setVersion(e.currentTarget.value)} />
        </label>
        <label>
          Advisory or alias <input value={id} onInput={(e) => setId(e.currentTarget.value)} placeholder="CVE-2016-10931" />
        </label>
        <button type="submit">Search</button>
      </form>
      {found ? (
        <Table
          caption={`${found.length} advisories`}
          rows={found}
          rowKey={(a) => a.uid}
          empty="No advisory matches."
          columns={columns<Advisory>(
            ["Advisory", (a) => <a href={`#/advisories/${a.uid}`}>{a.advisoryId}</a>],
            ["Package", (a) => a.artifactName],
            ["Aliases", (a) => a.aliases.join(", ")],
            ["Fixed in", (a) => fixes(a) || "no fix yet"],
            ["Summary", (a) => a.summary],
          )}
        />
      ) : null}
    </section>
  );
}
