import { useEffect, useState } from "preact/hooks";
import { CapSchema, type Cap } from "../../../gen/platform/common/v1/authorization_pb.js";
import type { Role } from "../../../gen/platform/iam/v2/role_pb.js";
import { api } from "../api.js";

/** A capability's domain and action from its enum name: `CAP_IAM_GROUPS_LIST` is IAM, groups list. */
function split(cap: Cap): { domain: string; action: string } {
  const [, domain = "", ...rest] = (CapSchema.value[cap]?.name ?? String(cap)).split("_");
  return { domain, action: rest.join(" ").toLowerCase() };
}

/** Capabilities grouped by domain, domains in order of first appearance. */
function byDomain(caps: readonly Cap[]): Array<[string, string[]]> {
  const groups = new Map<string, string[]>();
  for (const cap of caps) {
    const { domain, action } = split(cap);
    groups.set(domain, [...(groups.get(domain) ?? []), action]);
  }
  return [...groups];
}

/** The roles the caller can see (the built-in ones and those of their groups), each with its capabilities by domain. */
export function RolesPage({ onError }: { onError: (error: unknown) => void }) {
  const [roles, setRoles] = useState<Role[]>([]);
  useEffect(() => {
    api.roles.listRoles({ pageSize: 200, orderBy: "name" }).then((r) => setRoles(r.roles), onError);
  }, []);
  return (
    <section aria-labelledby="roles">
      <h1 id="roles">Roles</h1>
      {roles.map((role) => (
        <article key={role.uid} aria-labelledby={`role-${role.uid}`} class="role">
          <h2 id={`role-${role.uid}`}>{role.name}</h2>
          {role.description ? <p>{role.description}</p> : null}
          <dl class="capabilities">
            {byDomain(role.capabilities).map(([domain, actions]) => (
              <div key={domain}>
                <dt>{domain}</dt>
                <dd>{actions.join(", ")}</dd>
              </div>
            ))}
          </dl>
        </article>
      ))}
    </section>
  );
}
