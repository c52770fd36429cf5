import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import type { WhoAmI } from "../../gen/platform/auth/v1/auth_pb.js";
import { api, messageOf, SessionEnded } from "./api.js";
import { completeSignIn, currentSession, signIn, signOut } from "./auth.js";
import { AccessPage } from "./pages/access.js";
import { AdvisoriesPage } from "./pages/advisories.js";
import { AdvisoryPage } from "./pages/advisory.js";
import { EventsPage } from "./pages/events.js";
import { IdentitiesPage } from "./pages/identities.js";
import { LibrariesPage } from "./pages/libraries.js";
import { RolesPage } from "./pages/roles.js";
import { RepoPage, ReportPage, TagPage } from "./pages/repos.js";
import { TreePage } from "./pages/tree.js";
import "./styles.css";

type Phase = { kind: "loading" } | { kind: "signed-out"; reason?: string } | { kind: "ready"; whoami: WhoAmI };

type Route = { page: "tree" | "repo" | "tag" | "access" | "identities" | "events" | "advisory"; uid: string } | { page: "report"; uid: string; digest: string } | { page: "advisories" } | { page: "libraries" } | { page: "roles" };

/**
 * The page the address names (a uid keeps its `/`): `#/groups/<uid>`, `#/repos/<uid>`,
 * `#/tags/<uid>`, `#/reports/<repo uid>@<digest>`, `#/access/<group uid>`,
 * `#/identities/<group uid>`, `#/events/<group uid>`, `#/advisories`, `#/advisories/<uid>`, `#/libraries`, `#/roles`; else
 * the organizations.
 */
function routeOf(hash: string): Route {
  if (hash === "#/advisories") return { page: "advisories" };
  if (hash === "#/libraries") return { page: "libraries" };
  if (hash === "#/roles") return { page: "roles" };
  const match = /^#\/(groups|repos|tags|reports|access|identities|events|advisories)\/(.+)$/.exec(hash);
  if (!match) return { page: "tree", uid: "" };
  const value = decodeURIComponent(match[2]);
  if (match[1] === "reports") {
    const [uid, digest] = value.split("@");
    return { page: "report", uid, digest: digest ?? "" };
  }
  const page = ({ groups: "tree", repos: "repo", tags: "tag", access: "access", identities: "identities", events: "events", advisories: "advisory" } as const)[match[1] as "groups" | "repos" | "tags" | "access" | "identities" | "events" | "advisories"];
  return { page, uid: value };
}

function Page({ route, whoami, onError }: { route: Route; whoami: WhoAmI; onError: (error: unknown) => void }) {
  switch (route.page) {
    case "repo":
      return <RepoPage uid={route.uid} onError={onError} />;
    case "tag":
      return <TagPage uid={route.uid} onError={onError} />;
    case "report":
      return <ReportPage repoUid={route.uid} digest={route.digest} onError={onError} />;
    case "access":
      return <AccessPage uid={route.uid} whoami={whoami} onError={onError} />;
    case "identities":
      return <IdentitiesPage uid={route.uid} whoami={whoami} onError={onError} />;
    case "advisory":
      return <AdvisoryPage uid={route.uid} onError={onError} />;
    case "advisories":
      return <AdvisoriesPage onError={onError} />;
    case "roles":
      return <RolesPage onError={onError} />;
    case "libraries":
      return <LibrariesPage onError={onError} />;
    case "events":
      return <EventsPage uid={route.uid} onError={onError} />;
    default:
      return <TreePage uid={route.page === "tree" ? route.uid : ""} whoami={whoami} onError={onError} />;
  }
}

function App() {
  const [phase, setPhase] = useState<Phase>({ kind: "loading" });
  const [route, setRoute] = useState<Route>(routeOf(location.hash));
  const [error, setError] = useState("");

  const load = async () => {
    try {
      await completeSignIn();
      // Back from the provider, the address holds the page the person was on again.
      setRoute(routeOf(location.hash));
      if (!currentSession()) return setPhase({ kind: "signed-out" });
      setPhase({ kind: "ready", whoami: await api.auth.validate({}) });
    } catch (failure) {
      setPhase({ kind: "signed-out", reason: messageOf(failure) });
    }
  };
  useEffect(() => {
    void load();
    const onHash = () => {
      setError("");
      setRoute(routeOf(location.hash));
    };
    addEventListener("hashchange", onHash);
    return () => removeEventListener("hashchange", onHash);
  }, []);

  /** A refusal shows its message; an ended session returns to sign-in on the same page. */
  const onError = (failure: unknown) => {
    if (failure instanceof SessionEnded) setPhase({ kind: "signed-out", reason: "Your session has ended: sign in again to continue where you were." });
    else setError(messageOf(failure));
  };

  if (phase.kind === "loading") return <main><p>Loading…</p></main>;
  if (phase.kind === "signed-out") {
    return (
      <main class="center">
        <h1>Platform console</h1>
        {phase.reason ? <p role="alert">{phase.reason}</p> : null}
        <button type="button" onClick={() => void signIn()}>
          Sign in
        </button>
      </main>
    );
  }
  const { whoami } = phase;
  return (
    <>
      <header class="topbar">
        <a href="#/" class="brand">
          Platform console
        </a>
        <nav aria-label="Sections" class="sections">
          <a href="#/">Organizations</a> <a href="#/roles">Roles</a> <a href="#/advisories">Advisories</a> <a href="#/libraries">Libraries</a>
        </nav>
        <span class="who">{whoami.email || whoami.subject}</span>
        <button type="button" onClick={() => void signOut().then(() => setPhase({ kind: "signed-out" }))}>
          Sign out
        </button>
      </header>
      <main>
        {error ? (
          <p role="alert" class="error">
            {error}
          </p>
        ) : null}
        {whoami.capabilities.length === 0 ? <Register onDone={() => void load()} onError={onError} /> : <Page route={route} whoami={whoami} onError={onError} />}
      </main>
    </>
  );
}

/** A person signed in who belongs to no organization yet: an invite's code makes them a member. */
function Register({ onDone, onError }: { onDone: () => void; onError: (error: unknown) => void }) {
  const [code, setCode] = useState("");
  return (
    <section aria-labelledby="join">
      <h1 id="join">Join an organization</h1>
      <p>You are signed in but belong to no organization yet. Paste the invite code someone sent you.</p>
      <form
        class="row"
        onSubmit={(event) => {
          event.preventDefault();
          api.auth.register({ code }).then(onDone, onError);
        }}
      >
        <label>
          Invite code <input value={code} onInput={(e) => setCode(e.currentTarget.value)} required autoComplete="off" />
        </label>
        <button type="submit">Join</button>
      </form>
    </section>
  );
}

render(<App />, document.getElementById("app")!);
