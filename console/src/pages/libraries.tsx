import { timestampDate } from "@bufbuild/protobuf/wkt";
import { useState } from "preact/hooks";
import { Ecosystem, type Artifact, type ArtifactVersion } from "../../../gen/platform/libraries/v2/artifact_pb.js";
import { api } from "../api.js";

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
        <table>
          <caption>Versions of {open.name}</caption>
          <thead>
            <tr>
              <th scope="col">Version</th>
              <th scope="col">Published</th>
              <th scope="col">Advisories</th>
            </tr>
          </thead>
          <tbody>
            {versions.map((v) => (
              <tr key={v.uid}>
                <td>{v.version}</td>
                <td>{v.publishTime ? timestampDate(v.publishTime).toLocaleDateString() : ""}</td>
                <td>{v.advisories.map((a) => a.advisoryId).join(", ") || "none"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}
