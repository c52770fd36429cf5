import { timestampDate } from "@bufbuild/protobuf/wkt";
import { useState } from "preact/hooks";
import { Ecosystem, type Artifact, type ArtifactVersion } from "../../../gen/platform/libraries/v2/artifact_pb.js";
import { api } from "../api.js";
import { columns, Table } from "../table.js";

const ECOSYSTEMS = [
  ["JavaScript (npm)", Ecosystem.JAVASCRIPT],
  ["Python (PyPI)", Ecosystem.PYTHON],
  ["Java (Maven)", Ecosystem.JAVA],
] as const;

/** The organizations' library indexes: search by name in an ecosystem, then an artifact's versions and the advisories of each. */
export function LibrariesPage({ onError }: { onError: (error: unknown) => void }) {
  const [ecosystem, setEcosystem] = useState<Ecosystem>(Ecosystem.JAVASCRIPT);
  const [query, setQuery] = useState("");
  const [found, setFound] = useState<Artifact[] | undefined>();
  const [open, setOpen] = useState<Artifact>();
  const [versions, setVersions] = useState<ArtifactVersion[]>([]);

  const search = (event: Event) => {
    event.preventDefault();
    setOpen(undefined);
    api.libraries.listArtifacts({ ecosystems: [ecosystem], query, pageSize: 50 }).then((r) => setFound(r.artifacts), onError);
  };
  const show = (artifact: Artifact) => {
    setOpen(artifact);
    api.libraries.listArtifactVersions({ artifactId: artifact.uid, pageSize: 50 }).then((r) => setVersions(r.artifactVersions), onError);
  };

  return (
    <section aria-labelledby="libraries">
      <h1 id="libraries">Libraries</h1>
      <form class="row" onSubmit={search}>
        <label>
          Ecosystem
          <select aria-label="Ecosystem" value={String(ecosystem)} onChange={(e) => setEcosystem(Number(e.currentTarget.value) as Ecosystem)}>
            {ECOSYSTEMS.map(([name, value]) => (
              <option value={String(value)}>{name}</option>
            ))}
          </select>
        </label>
        <label>
          Name <input value={query} onInput={(e) => setQuery(e.currentTarget.value)} />
        </label>
        <button type="submit">Search</button>
      </form>
      {found ? (
        <ul class="list">
          {found.map((a) => (
            <li key={a.uid}>
              <button type="button" class="link" onClick={() => show(a)}>
                {a.name}
              </button>{" "}
              {a.latestVersion} ({a.versionCount} versions) {a.description}
            </li>
          ))}
        </ul>
      ) : null}
      {open ? (
        <Table
          caption={`Versions of ${open.name}`}
          rows={versions}
          rowKey={(v) => v.uid}
          columns={columns<ArtifactVersion>(
            ["Version", (v) => v.version],
            ["Published", (v) => (v.publishTime ? timestampDate(v.publishTime).toLocaleDateString() : "")],
            ["Advisories", (v) => v.advisories.map((a) => a.advisoryId).join(", ") || "none"],
          )}
        />
      ) : null}
    </section>
  );
}
