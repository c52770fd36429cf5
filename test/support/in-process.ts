import { createClient, createRouterTransport, type Client } from "@connectrpc/connect";
import { GroupsService } from "../../gen/platform/iam/v2/groups_service_pb.js";
import { newChildUid } from "../../src/api/uidp.js";
import { createApiHost, type ApiHost } from "../../src/api-host.js";
import { builtInRole } from "../../src/auth/capabilities.js";
import { bootstrapOrganization } from "../../src/bootstrap.js";
import { defaultLimits } from "../../src/config.js";
import { createLogger } from "../../src/logger.js";
import { insertIdentity } from "../../src/store/repositories/identities.js";
import { bindRole } from "../../src/store/repositories/role-bindings.js";
import { openStore, type Store } from "../../src/store/store.js";

const API_URL = "http://api.test";

/** The API host's services and interceptors over an in-memory transport and an in-memory SQLite store. */
export interface InProcessApi {
  store: Store;
  host: ApiHost;
  org: string;
  ownerToken: string;
  groups: Client<typeof GroupsService>;
  /** Call options carrying `token`. */
  as(token: string): { headers: Record<string, string> };
  /** An identity under `group` bound to a built-in role on `on`, and its token. */
  identityWith(group: string, role: "viewer" | "editor" | "owner" | "registry.pull", on: string): Promise<string>;
  close(): Promise<void>;
}

export async function startInProcess(dbUrl = ":memory:"): Promise<InProcessApi> {
  const store = await openStore(dbUrl);
  const host = await createApiHost(store, { apiUrl: API_URL, registryUrl: "http://registry.test", logLevel: "silent", limits: defaultLimits }, createLogger("silent"));
  const transport = createRouterTransport(host.routes, { router: { interceptors: host.interceptors } });
  const { organization, identity } = await bootstrapOrganization(store, "acme", Date.now());
  const token = async (subject: string) => (await host.tokens.issue({ subject, audience: API_URL })).token;
  return {
    store,
    host,
    org: organization.uid,
    ownerToken: await token(identity.uid),
    groups: createClient(GroupsService, transport),
    as: (t) => ({ headers: { authorization: `Bearer ${t}` } }),
    async identityWith(group, role, on) {
      const uid = newChildUid(group);
      const now = Date.now();
      await insertIdentity(store.db, { uid, group_uid: group, name: "someone", description: "", claim_match: "", static_keys: "", last_seen_time: null, create_time: now, update_time: now });
      await bindRole(store.db, on, uid, builtInRole(role).uid, now);
      return token(uid);
    },
    close: () => store.close(),
  };
}
