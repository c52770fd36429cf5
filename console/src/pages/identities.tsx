import { timestampDate } from "@bufbuild/protobuf/wkt";
import { useEffect, useState } from "preact/hooks";
import type { WhoAmI } from "../../../gen/platform/auth/v1/auth_pb.js";
import type { ExternalGroupRoleMapping } from "../../../gen/platform/iam/v2/external_group_role_mapping_pb.js";
import type { Identity } from "../../../gen/platform/iam/v2/identity_pb.js";
import type { IdentityProvider } from "../../../gen/platform/iam/v2/identity_provider_pb.js";
import type { Role } from "../../../gen/platform/iam/v2/role_pb.js";
import { api } from "../api.js";
import { useChanges } from "../changes.js";
import { Choice } from "../choice.js";
import { holds } from "../grants.js";
import { columns, Table } from "../table.js";

type OnError = { onError: (error: unknown) => void };

/** How an identity proves itself in a token exchange, in a few words. */
function proofOf(identity: Identity): string {
  const { relationship } = identity;
  if (relationship.case === "claimMatch") {
    const m = relationship.value;
    return `tokens of ${m.issuer || m.issuerPattern} for ${m.subject || m.subjectPattern || "any subject"}`;
  }
  if (relationship.case === "staticKeys") return `keys registered for ${relationship.value.subject || relationship.value.issuer}`;
  if (relationship.case === "pullToken") return `a pull token's password, until ${relationship.value.expireTime ? timestampDate(relationship.value.expireTime).toLocaleDateString() : "?"}`;
  return "signs in, or tokens from the operator";
}

/** The identities at a group and below, and the group's sign-in providers with their group mappings. */
export function IdentitiesPage({ uid, whoami, onError }: { uid: string; whoami: WhoAmI } & OnError) {
  const [identities, setIdentities] = useState<Identity[]>([]);
  const [providers, setProviders] = useState<IdentityProvider[]>([]);
  const [roles, setRoles] = useState<Role[]>([]);
  const { version, act, reload } = useChanges(onError);

  useEffect(() => {
    if (holds(whoami, "identity.list", uid)) api.identities.listIdentities({ uidp: { descendantsOf: uid }, orderBy: "name", pageSize: 200 }).then((r) => setIdentities(r.identities), onError);
    if (holds(whoami, "identity_providers.list", uid)) api.identityProviders.listIdentityProviders({ uidp: { childrenOf: uid }, orderBy: "name", pageSize: 200 }).then((r) => setProviders(r.identityProviders), onError);
  }, [uid, version]);
  useEffect(() => {
    api.roles.listRoles({ pageSize: 200, orderBy: "name" }).then((r) => setRoles(r.roles), onError);
  }, []);
  const roleName = (roleUid: string) => roles.find((r) => r.uid === roleUid)?.name ?? roleUid;

  return (
    <section aria-labelledby="identities">
      <nav aria-label="Breadcrumbs" class="crumbs">
        <a href={`#/groups/${uid}`}>Back to the group</a>
      </nav>
      <h1 id="identities">Identities and sign-in providers</h1>
      <Table
        caption="Identities at this group and below"
        rows={identities}
        rowKey={(i) => i.uid}
        empty="No identities here."
        columns={columns<Identity>(
          ["Name", (i) => i.name],
          ["Proves itself with", proofOf],
          ["Last seen", (i) => (i.lastSeenTime ? timestampDate(i.lastSeenTime).toLocaleString() : "never")],
          [
            "Actions",
            (i) =>
              holds(whoami, "identity.delete", i.uid) ? (
                <button type="button" class="danger" onClick={act(() => api.identities.deleteIdentity({ uid: i.uid }))} aria-label={`Delete the identity ${i.name}`}>
                  Delete
                </button>
              ) : null,
          ],
        )}
      />
      <h2>Sign-in providers</h2>
      {providers.length === 0 ? <p>No OpenID Connect provider signs people in to this group.</p> : null}
      {providers.map((p) => (
        <ProviderCard key={p.uid} provider={p} roles={roles} roleName={roleName} whoami={whoami} onChanged={reload} onError={onError} />
      ))}
      {holds(whoami, "identity_providers.create", uid) ? <NewProvider group={uid} roles={roles} onCreated={reload} onError={onError} /> : null}
    </section>
  );
}

/** A provider: how it is reached, its default role, and its external groups mapped to roles. */
function ProviderCard({ provider, roles, roleName, whoami, onChanged, onError }: { provider: IdentityProvider; roles: Role[]; roleName: (uid: string) => string; whoami: WhoAmI; onChanged: () => void } & OnError) {
  const [mappings, setMappings] = useState<ExternalGroupRoleMapping[]>([]);
  const [externalGroup, setExternalGroup] = useState("");
  const [role, setRole] = useState("");
  const { version, act } = useChanges(onError);
  const oidc = provider.configuration.case === "oidc" ? provider.configuration.value : undefined;

  useEffect(() => {
    if (holds(whoami, "external_group_role_mappings.list", provider.uid))
      api.groupMappings.listExternalGroupRoleMappings({ identityProviderUid: provider.uid, orderBy: "external_group_id", pageSize: 200 }).then((r) => setMappings(r.externalGroupRoleMappings), onError);
  }, [provider.uid, version]);

  return (
    <article class="card" aria-labelledby={`provider-${provider.uid}`}>
      <h3 id={`provider-${provider.uid}`}>{provider.name}</h3>
      <dl class="facts">
        <dt>Issuer</dt>
        <dd>{oidc?.issuer}</dd>
        <dt>Client</dt>
        <dd>
          {oidc?.clientId}
          {oidc?.pkceEnabled ? " (public, PKCE)" : ""}
        </dd>
        <dt>Default role</dt>
        <dd>{provider.defaultRole ? roleName(provider.defaultRole) : "none"}</dd>
        <dt>Groups claim</dt>
        <dd>{oidc?.groupsClaim || "not used"}</dd>
      </dl>
      <Table
        caption={`Group mappings of ${provider.name}`}
        rows={mappings}
        rowKey={(m) => m.uid}
        empty="No external group is mapped."
        columns={columns<ExternalGroupRoleMapping>(
          ["External group", (m) => m.externalGroupId],
          ["Role", (m) => roleName(m.roleUid)],
          [
            "Actions",
            (m) =>
              holds(whoami, "external_group_role_mappings.delete", provider.uid) ? (
                <button type="button" onClick={act(() => api.groupMappings.deleteExternalGroupRoleMapping({ uid: m.uid }))} aria-label={`Remove the mapping of ${m.externalGroupId}`}>
                  Remove
                </button>
              ) : null,
          ],
        )}
      />
      {holds(whoami, "external_group_role_mappings.create", provider.uid) ? (
        <form
          class="row"
          onSubmit={act(
            () => api.groupMappings.createExternalGroupRoleMapping({ parent: provider.uid, externalGroupRoleMapping: { externalGroupId: externalGroup, roleUid: role } }),
            () => setExternalGroup(""),
          )}
        >
          <label>
            External group <input value={externalGroup} onInput={(e) => setExternalGroup(e.currentTarget.value)} required />
          </label>
          <Choice label="Mapped role" value={role} onChange={setRole} items={roles} none="Choose a role" required />
          <button type="submit">Map group</button>
        </form>
      ) : null}
      {holds(whoami, "identity_providers.delete", provider.uid) ? (
        <button type="button" class="danger" onClick={act(() => api.identityProviders.deleteIdentityProvider({ uid: provider.uid }), onChanged)}>
          Delete provider {provider.name}
        </button>
      ) : null}
    </article>
  );
}

/** A new OpenID Connect provider at the group: a confidential client with its secret, or a public one with PKCE. */
function NewProvider({ group, roles, onCreated, onError }: { group: string; roles: Role[]; onCreated: () => void } & OnError) {
  const blank = { name: "", issuer: "", clientId: "", clientSecret: "", groupsClaim: "", defaultRole: "", pkce: false };
  const [form, setForm] = useState(blank);
  const { act } = useChanges(onError);
  const field = (key: keyof typeof blank) => (e: { currentTarget: HTMLInputElement | HTMLSelectElement }) => setForm({ ...form, [key]: e.currentTarget.value });
  return (
    <form
      class="stack"
      aria-labelledby="new-provider"
      onSubmit={act(
        () =>
          api.identityProviders.createIdentityProvider({
            parent: group,
            identityProvider: {
              name: form.name,
              defaultRole: form.defaultRole,
              configuration: { case: "oidc", value: { issuer: form.issuer, clientId: form.clientId, clientSecret: form.clientSecret, groupsClaim: form.groupsClaim, pkceEnabled: form.pkce } },
            },
          }),
        () => {
          setForm(blank);
          onCreated();
        },
      )}
    >
      <h3 id="new-provider">Add a sign-in provider</h3>
      <div class="row">
        <label>
          Provider name <input value={form.name} onInput={field("name")} required maxLength={128} />
        </label>
        <label>
          Issuer URL <input type="url" value={form.issuer} onInput={field("issuer")} required placeholder="https://accounts.example.com" />
        </label>
        <label>
          Client id <input value={form.clientId} onInput={field("clientId")} required autoComplete="off" />
        </label>
        <label>
          Client secret <input type="password" value={form.clientSecret} onInput={field("clientSecret")} required={!form.pkce} autoComplete="off" />
        </label>
        <label class="inline">
          <input type="checkbox" checked={form.pkce} onChange={(e) => setForm({ ...form, pkce: e.currentTarget.checked })} /> Public client (PKCE, no secret)
        </label>
        <label>
          Groups claim <input value={form.groupsClaim} onInput={field("groupsClaim")} placeholder="groups" />
        </label>
        <Choice label="Default role" value={form.defaultRole} onChange={(defaultRole) => setForm({ ...form, defaultRole })} items={roles} none="None" />
      </div>
      <button type="submit">Add provider</button>
    </form>
  );
}
