import { useEffect, useState } from "preact/hooks";
import type { WhoAmI } from "../../../gen/platform/auth/v1/auth_pb.js";
import type { GroupInvite } from "../../../gen/platform/iam/v2/group_invite_pb.js";
import type { Identity } from "../../../gen/platform/iam/v2/identity_pb.js";
import type { Role } from "../../../gen/platform/iam/v2/role_pb.js";
import type { RoleBinding } from "../../../gen/platform/iam/v2/role_binding_pb.js";
import { api } from "../api.js";
import { useChanges } from "../changes.js";
import { Choice } from "../choice.js";
import { holds } from "../grants.js";
import { columns, Table } from "../table.js";

/** Who holds which role at a group, binding a role there, and its invites (create and copy a code, revoke). */
export function AccessPage({ uid, whoami, onError }: { uid: string; whoami: WhoAmI; onError: (error: unknown) => void }) {
  const [bindings, setBindings] = useState<RoleBinding[]>([]);
  const [invites, setInvites] = useState<GroupInvite[]>([]);
  const [identities, setIdentities] = useState<Identity[]>([]);
  const [roles, setRoles] = useState<Role[]>([]);
  const [identity, setIdentity] = useState("");
  const [role, setRole] = useState("");
  const [inviteRole, setInviteRole] = useState("");
  const [email, setEmail] = useState("");
  const [code, setCode] = useState("");
  const { version, act } = useChanges(onError);
  const organization = uid.split("/")[0];

  useEffect(() => {
    api.bindings.listRoleBindings({ group: uid, pageSize: 200 }).then((r) => setBindings(r.roleBindings), onError);
    if (holds(whoami, "group_invites.list", uid)) api.invites.listGroupInvites({ uidp: { childrenOf: uid }, pageSize: 200 }).then((r) => setInvites(r.groupInvites), onError);
  }, [uid, version]);
  useEffect(() => {
    if (holds(whoami, "identity.list", organization)) api.identities.listIdentities({ uidp: { descendantsOf: organization }, pageSize: 200, orderBy: "name" }).then((r) => setIdentities(r.identities), onError);
    api.roles.listRoles({ pageSize: 200, orderBy: "name" }).then((r) => setRoles(r.roles), onError);
  }, [organization]);


  return (
    <section aria-labelledby="access">
      <nav aria-label="Breadcrumbs" class="crumbs">
        <a href={`#/groups/${uid}`}>Back to the group</a>
      </nav>
      <h1 id="access">Access</h1>
      <Table
        caption="Role bindings at this group"
        rows={bindings}
        rowKey={(b) => b.uid}
        empty="No role is bound here."
        columns={columns<RoleBinding>(
          ["Identity", (b) => b.identity?.name || b.identity?.uid],
          ["Role", (b) => b.role?.name],
          [
            "Actions",
            (b) =>
              holds(whoami, "role_bindings.delete", uid) ? (
                <button type="button" onClick={act(() => api.bindings.deleteRoleBinding({ uid: b.uid }))} aria-label={`Remove ${b.role?.name} from ${b.identity?.name}`}>
                  Remove
                </button>
              ) : null,
          ],
        )}
      />
      {holds(whoami, "role_bindings.create", uid) ? (
        <form class="row" onSubmit={act(() => api.bindings.createRoleBinding({ parent: uid, roleBinding: { identityUid: identity, roleUid: role } }))}>
          <Choice label="Identity" value={identity} onChange={setIdentity} items={identities} none="Choose an identity" required />
          <Choice label="Role" value={role} onChange={setRole} items={roles} none="Choose a role" required />
          <button type="submit">Bind role</button>
        </form>
      ) : null}
      {holds(whoami, "group_invites.list", uid) ? (
        <>
          <h2>Invites</h2>
          <ul class="list">
            {invites.map((i) => (
              <li key={i.uid}>
                {i.role?.name} {i.email ? `for ${i.email}` : "for anyone with the code"}{" "}
                {holds(whoami, "group_invites.delete", uid) ? (
                  <button type="button" onClick={act(() => api.invites.deleteGroupInvite({ uid: i.uid }))} aria-label={`Revoke the ${i.role?.name} invite ${i.email}`}>
                    Revoke
                  </button>
                ) : null}
              </li>
            ))}
          </ul>
        </>
      ) : null}
      {holds(whoami, "group_invites.create", uid) ? (
        <form
          class="row"
          onSubmit={act(async () => {
            const made = await api.invites.createGroupInvite({ parent: uid, groupInvite: { roleUid: inviteRole, email, ttl: { seconds: BigInt(7 * 86400) } } });
            setCode(made.code);
          })}
        >
          <Choice label="Invite with role" value={inviteRole} onChange={setInviteRole} items={roles} none="Choose a role" required />
          <label>
            Email (optional) <input type="email" value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
          </label>
          <button type="submit">Create invite</button>
        </form>
      ) : null}
      {code ? (
        <p role="status">
          Invite code (shown once): <code>{code}</code>{" "}
          <button type="button" onClick={() => void navigator.clipboard.writeText(code)}>
            Copy code
          </button>
        </p>
      ) : null}
    </section>
  );
}
