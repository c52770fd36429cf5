import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import fc from "fast-check";
import { newChildUid } from "../../src/aip/uidp.js";
import { BUILT_IN_ROLES } from "../../src/access/capabilities.js";
import { bootstrapOrganization } from "../../src/server/bootstrap.js";
import { startInProcess, type InProcessApi } from "../support/in-process.js";

/**
 * Generates group trees, role bindings and calls, and compares every decision
 * of the server with an independent model: parent pointers and a walk up the
 * tree, no uid arithmetic, no SQL.
 */

type RoleName = "viewer" | "editor" | "owner" | "registry.pull";
const ROLES: RoleName[] = ["viewer", "editor", "owner", "registry.pull"];
const capsOf = (role: RoleName) => new Set(BUILT_IN_ROLES.find((r) => r.name === role)!.capabilities);

interface Model {
  /** parent[i] is the index of node i's parent; -1 for the organization. */
  parent: number[];
  bindings: Array<{ who: number; role: RoleName; on: number }>;
}

function holds(model: Model, who: number, capability: string, node: number): boolean {
  for (let n = node; n !== -1; n = model.parent[n]) {
    if (model.bindings.some((b) => b.who === who && b.on === n && capsOf(b.role).has(capability))) return true;
  }
  return false;
}

const scenario = fc.record({
  parents: fc.array(fc.nat(), { minLength: 1, maxLength: 7 }).map((xs) => [-1, ...xs.map((x, i) => x % (i + 1))]),
  bindings: fc.array(fc.record({ who: fc.nat(1), role: fc.constantFrom(...ROLES), on: fc.nat() }), { maxLength: 5 }),
  calls: fc.array(
    fc.record({ who: fc.nat(1), op: fc.constantFrom("get", "list", "create", "update", "delete-missing"), on: fc.nat() }),
    { minLength: 1, maxLength: 8 },
  ),
});

let api: InProcessApi;
before(async () => {
  api = await startInProcess();
});
after(() => api.close());

const codeOf = (error: unknown) => ConnectError.from(error).code;

test("GroupsService decisions match the model for generated trees, bindings and calls", async () => {
  let run = 0;
  await fc.assert(
    fc.asyncProperty(scenario, async ({ parents, bindings, calls }) => {
      run++;
      const { organization } = await bootstrapOrganization(api.store, `prop-${run}-${Date.now()}`, Date.now());
      const owner = api.as(await api.identityWith(organization.uid, "owner", organization.uid));
      const uids: string[] = [organization.uid];
      for (let i = 1; i < parents.length; i++) {
        uids.push((await api.groups.createGroup({ parent: uids[parents[i]], group: { name: `n${i}` } }, owner)).uid);
      }
      const model: Model = { parent: [...parents], bindings: bindings.map((b) => ({ ...b, on: b.on % uids.length })) };
      // Each identity gets a first binding (its token needs one), then the generated ones.
      const tokens: string[] = [];
      for (const who of [0, 1]) {
        const first = model.bindings.find((b) => b.who === who);
        if (!first) {
          tokens.push(await api.identityWith(organization.uid, "viewer", uids[uids.length - 1]));
          model.bindings.push({ who, role: "viewer", on: uids.length - 1 });
          continue;
        }
        tokens.push(await api.identityWith(organization.uid, first.role, uids[first.on]));
      }
      const { db } = api.store;
      const identityOf = async (token: string) => JSON.parse(Buffer.from(token.split(".")[1], "base64url").toString()).sub as string;
      const whoUid = [await identityOf(tokens[0]), await identityOf(tokens[1])];
      const seen = new Set<string>();
      for (const b of model.bindings) {
        const key = `${b.who}/${b.role}/${b.on}`;
        if (seen.has(key)) continue;
        seen.add(key);
        const exists = await db
          .selectFrom("role_bindings")
          .select("uid")
          .where("identity_uid", "=", whoUid[b.who])
          .where("group_uid", "=", uids[b.on])
          .where("role_uid", "=", BUILT_IN_ROLES.find((r) => r.name === b.role)!.uid)
          .executeTakeFirst();
        if (!exists) {
          await db
            .insertInto("role_bindings")
            .values({ uid: newChildUid(uids[b.on]), group_uid: uids[b.on], identity_uid: whoUid[b.who], role_uid: BUILT_IN_ROLES.find((r) => r.name === b.role)!.uid, create_time: 0 })
            .execute();
        }
      }

      for (const call of calls) {
        const on = call.on % uids.length;
        const as = api.as(tokens[call.who]);
        const where = `${call.op} by ${call.who} on node ${on}`;
        if (call.op === "list") {
          const got = new Set<string>();
          let pageToken = "";
          do {
            const page = await api.groups.listGroups({ uidp: { descendantsOf: organization.uid }, pageSize: 3, pageToken }, as);
            page.groups.forEach((g) => got.add(g.uid));
            assert.equal(page.totalCount, BigInt(uids.slice(1).filter((_, i) => holds(model, call.who, "CAP_IAM_GROUPS_LIST", i + 1)).length), where);
            pageToken = page.nextPageToken;
          } while (pageToken);
          const expected = uids.map((u, i) => [u, i] as const).filter(([, i]) => i > 0 && holds(model, call.who, "CAP_IAM_GROUPS_LIST", i));
          assert.deepEqual([...got].sort(), expected.map(([u]) => u).sort(), where);
          continue;
        }
        const capability = { get: "CAP_IAM_GROUPS_LIST", create: "CAP_IAM_GROUPS_CREATE", update: "CAP_IAM_GROUPS_UPDATE", "delete-missing": "CAP_IAM_GROUPS_DELETE" }[call.op];
        const allowed = holds(model, call.who, capability, on);
        const attempt = async () => {
          if (call.op === "get") return api.groups.getGroup({ uid: uids[on] }, as);
          if (call.op === "update") return api.groups.updateGroup({ group: { uid: uids[on], description: `by ${call.who}` }, updateMask: { paths: ["description"] } }, as);
          if (call.op === "delete-missing") return api.groups.deleteGroup({ uid: newChildUid(uids[on]) }, as);
          const made = await api.groups.createGroup({ parent: uids[on], group: { name: `c${uids.length}` } }, as);
          uids.push(made.uid);
          model.parent.push(on);
          return made;
        };
        const expected = !allowed ? Code.PermissionDenied : call.op === "delete-missing" ? Code.NotFound : undefined;
        let code: Code | undefined;
        try {
          await attempt();
        } catch (error) {
          code = codeOf(error);
        }
        assert.equal(code, expected, where);
      }
    }),
    { numRuns: 25 },
  );
});
