import type { ServiceImpl } from "@connectrpc/connect";
import { UpstreamSchema } from "../../../gen/platform/registry/v2/upstream_pb.js";
import { UpstreamsService } from "../../../gen/platform/registry/v2/upstreams_service_pb.js";
import { newChildUid } from "../../aip/uidp.js";
import { Violations } from "../../aip/validation.js";
import { inTransaction } from "../../store/transaction.js";
import { afterSmallTableWrite } from "./store/small-tables.js";
import type { Db } from "../kit/schema.js";
import type { ServiceDeps } from "../kit/deps.js";
import { checkedCreate, checkedPatch, checkedUpdate, deleteMethod, getMethod, listMethod, nameFilter } from "../kit/standard-methods.js";
import { isOrganization } from "../iam/index.js";
import { deleteUpstream, getUpstream, insertUpstream, listUpstreams, updateUpstream, upstreamOrderable, upstreamsOf } from "./store/upstreams.js";
import { upstreamColumns, upstreamFromRow } from "./upstream-mapper.js";
import { checkUpstreamFields, UPSTREAM_UPDATABLE } from "./upstream-validation.js";

/** Refuses a prefix that contains, or is contained in, another upstream's of the organization (a name would have two upstreams). */
async function checkPrefixFree(db: Db, organization: string, prefix: string, self?: string): Promise<void> {
  const clash = (await upstreamsOf(db, organization)).find((row) => row.uid !== self && row.repo_prefix !== prefix && (row.repo_prefix.startsWith(prefix) || prefix.startsWith(row.repo_prefix)));
  if (clash !== undefined) new Violations().add("upstream.repo_prefix", `overlaps the prefix ${clash.repo_prefix} of the upstream ${clash.uid}`).throwIfAny();
}

/** UpstreamsService: the registries backing prefixes of an organization's repos (pull-through). The password is write-only. Authorization ran in the interceptors. */
export function createUpstreamsService({ db, pager, now, secrets, upstreamRegistries }: ServiceDeps): ServiceImpl<typeof UpstreamsService> {
  const policy = upstreamRegistries ?? { allowHttp: false, allowPrivateAddresses: false };
  return {
    getUpstream: (req) => getMethod(req.uid, (uid) => getUpstream(db, uid), upstreamFromRow),

    listUpstreams: (req, ctx) => listMethod(ctx, pager, UpstreamsService.method.listUpstreams, req, "upstreams", {
      orderable: upstreamOrderable,
      ...nameFilter(req.name, { max: 128 }, (filter, page) => listUpstreams(db, filter, page)),
      map: upstreamFromRow,
    }),

    async createUpstream(req, ctx) {
      const [upstream] = checkedCreate(UpstreamSchema, req.upstream, req.parent, (violations, upstream) => checkUpstreamFields(violations, upstream, policy));
      return afterSmallTableWrite(inTransaction(db, ctx.signal, async (trx) => {
        if (!(await isOrganization(trx, req.parent))) new Violations().add("parent", "must be an organization: an upstream backs names of one organization").throwIfAny();
        await checkPrefixFree(trx, req.parent, upstream.repoPrefix);
        const time = now();
        const row = {
          uid: newChildUid(req.parent),
          group_uid: req.parent,
          repo_prefix: upstream.repoPrefix,
          ...upstreamColumns(upstream, secrets.seal(upstream.password)),
          create_time: time,
          update_time: time,
        };
        return upstreamFromRow(await insertUpstream(trx, row));
      }));
    },

    async updateUpstream(req, ctx) {
      const patch = checkedPatch(UpstreamSchema, req.upstream, "upstream");
      return afterSmallTableWrite(inTransaction(db, ctx.signal, async (trx) => {
        const stored = await getUpstream(trx, patch.uid);
        const [next] = checkedUpdate(UpstreamSchema, upstreamFromRow(stored), patch, req.updateMask, UPSTREAM_UPDATABLE, (violations, next) => checkUpstreamFields(violations, next, policy));
        // An empty password keeps the stored one, unless the mask names it (clearing it) or the username goes.
        const cleared = (req.updateMask?.paths ?? []).includes("password") || next.username === "";
        const password = next.password !== "" ? secrets.seal(next.password) : cleared ? "" : stored.password;
        return upstreamFromRow(await updateUpstream(trx, stored.uid, { ...upstreamColumns(next, password), update_time: now() }));
      }));
    },

    deleteUpstream: (req, ctx) => afterSmallTableWrite(deleteMethod(db, ctx, req.uid, (trx, uid) => deleteUpstream(trx, uid))),
  };
}
