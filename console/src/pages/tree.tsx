import { useEffect, useState } from "preact/hooks";
import type { WhoAmI } from "../../../gen/platform/auth/v1/auth_pb.js";
import type { Group } from "../../../gen/platform/iam/v2/group_pb.js";
import { api } from "../api.js";
import { useChanges } from "../changes.js";
import { ancestry, holds, rootGroups } from "../grants.js";
import { RepoList } from "./repos.js";

/** The organization tree: a group, its breadcrumbs and its folders; create, rename and delete where the caller may. */
export function TreePage({ uid, whoami, onError }: { uid: string; whoami: WhoAmI; onError: (error: unknown) => void }) {
  const [trail, setTrail] = useState<Group[]>([]);
  const [children, setChildren] = useState<Group[]>([]);
  const [name, setName] = useState("");
  const [renaming, setRenaming] = useState("");
  const [notice, setNotice] = useState("");
  const change = useChanges(onError);

  useEffect(() => {
    if (uid === "") return;
    let live = true;
    Promise.all([Promise.all(ancestry(uid).map((id) => api.groups.getGroup({ uid: id }))), api.groups.listGroups({ uidp: { childrenOf: uid }, orderBy: "name", pageSize: 100 })])
      .then(([groups, listed]) => {
        if (!live) return;
        setTrail(groups);
        setChildren(listed.groups);
        setRenaming(groups.at(-1)?.name ?? "");
      })
      .catch(onError);
    return () => void (live = false);
  }, [uid, change.version]);

  if (uid === "") {
    return (
      <section aria-labelledby="orgs">
        <h1 id="orgs">Organizations</h1>
        <ul class="list">
          {rootGroups(whoami).map((g) => (
            <li key={g.id}>
              <a href={`#/groups/${g.id}`}>{g.name}</a>
            </li>
          ))}
        </ul>
      </section>
    );
  }

  const current = trail.at(-1);
  const act = (work: () => Promise<unknown>, done: string) => change.act(work, () => setNotice(done));

  return (
    <section aria-labelledby="group-name">
      <nav aria-label="Breadcrumbs" class="crumbs">
        <a href="#/">Organizations</a>
        {trail.map((g) => (
          <span key={g.uid}>
            {" / "}
            <a href={`#/groups/${g.uid}`} aria-current={g.uid === uid ? "page" : undefined}>
              {g.name}
            </a>
          </span>
        ))}
      </nav>
      <h1 id="group-name">{current?.name ?? "…"}</h1>
      <p>
        <a href={`#/access/${uid}`}>Access: role bindings and invites</a>
        {" · "}
        <a href={`#/identities/${uid}`}>Identities and sign-in providers</a>
        {holds(whoami, "subscriptions.list", uid) ? (
          <>
            {" · "}
            <a href={`#/events/${uid}`}>Event subscriptions</a>
          </>
        ) : null}
      </p>
      {current?.description ? <p>{current.description}</p> : null}
      <p role="status" class="notice">
        {notice}
      </p>
      <h2>Folders</h2>
      {children.length === 0 ? <p>No folders here.</p> : null}
      <ul class="list">
        {children.map((g) => (
          <li key={g.uid}>
            <a href={`#/groups/${g.uid}`}>{g.name}</a>
          </li>
        ))}
      </ul>
      <RepoList group={uid} onError={onError} />
      {holds(whoami, "groups.create", uid) ? (
        <form class="row" onSubmit={act(() => api.groups.createGroup({ parent: uid, group: { name } }).then(() => setName("")), `Folder ${name} created.`)}>
          <label>
            New folder <input value={name} onInput={(e) => setName(e.currentTarget.value)} required maxLength={128} />
          </label>
          <button type="submit">Create folder</button>
        </form>
      ) : null}
      {current && holds(whoami, "groups.update", uid) ? (
        <form class="row" onSubmit={act(() => api.groups.updateGroup({ group: { uid, name: renaming }, updateMask: { paths: ["name"] } }), "Renamed.")}>
          <label>
            Name <input value={renaming} onInput={(e) => setRenaming(e.currentTarget.value)} required maxLength={128} />
          </label>
          <button type="submit">Rename</button>
        </form>
      ) : null}
      {current && uid.includes("/") && holds(whoami, "groups.delete", uid) ? (
        <form
          class="row"
          onSubmit={act(async () => {
            await api.groups.deleteGroup({ uid });
            location.hash = `#/groups/${ancestry(uid).at(-2)}`;
          }, "Deleted.")}
        >
          <button type="submit" class="danger">
            Delete this folder
          </button>
        </form>
      ) : null}
    </section>
  );
}
