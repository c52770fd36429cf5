import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { builtInRole } from "../../src/access/capabilities.js";
import { newChildUid } from "../../src/aip/uidp.js";
import { cloudEventHeaders } from "../../src/domains/events/dispatcher.js";
import { insertIdentity } from "../../src/domains/iam/store/identities.js";
import { testDatabases } from "../support/databases.js";
import { serveOverWires } from "../support/over-wires.js";

/**
 * The contract's quiet corners (issue 43, item 6), over REST and Connect on SQLite and PostgreSQL:
 * the terms list refuses a `uidp` filter it does not have (it answered as if unfiltered); a
 * `terms.accepted` event names the group as its CloudEvents subject (it was empty, which
 * CloudEvents 1.0 does not allow); registering or redeeming with a code already redeemed answers the
 * same and sends no second event.
 */

for (const database of await testDatabases()) {
  describe(`the contract's quiet corners (${database.name})`, { skip: database.skip }, () => {
    const served = serveOverWires({ database, logLevel: "silent" });
    const server = () => served.server();
    const call = async (path: string, init: { method?: string; body?: unknown; token?: string } = {}) => {
      const res = await fetch(`${server().apiUrl}${path}`, {
        method: init.method ?? (init.body === undefined ? "GET" : "POST"),
        headers: { authorization: `Bearer ${init.token ?? server().ownerToken}`, ...(init.body === undefined ? {} : { "content-type": "application/json" }) },
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
      });
      return { status: res.status, json: (await res.json()) as Record<string, unknown> };
    };
    const events = async (type: string) =>
      server().store.db.selectFrom("events").select(["subject", "group_uid"]).where("type", "like", `%${type}%`).orderBy("position").execute();

    test("the terms list refuses uidp filters it does not have, naming each", async () => {
      const org = server().org.uid;
      for (const filter of ["uidp.children_of", "uidp.descendantsOf"]) {
        const out = await call(`/iam/v2/terms/${org}?${filter}=${org}`);
        assert.equal(out.status, 400, JSON.stringify(out.json));
        const violations = (out.json.details as Array<{ fieldViolations?: Array<{ field: string }> }>).flatMap((d) => d.fieldViolations ?? []);
        assert.deepEqual(violations.map((v) => v.field), [filter]);
      }
      assert.equal((await call(`/iam/v2/terms/${org}`)).status, 200);
    });

    test("a terms.accepted event's subject is the group; an event without one carries no ce-subject", async () => {
      const org = server().org.uid;
      const accepted = await call(`/iam/v2/terms/${org}`, { body: { documentIds: ["tos-2026"] } });
      assert.equal(accepted.status, 200, JSON.stringify(accepted.json));
      const connect = await call("/platform.iam.v2.TermsService/AcceptTerms", { body: { group: org, documentIds: ["privacy-2026"] } });
      assert.equal(connect.status, 200, JSON.stringify(connect.json));
      const written = await events("terms.accepted");
      assert.equal(written.length, 2);
      for (const event of written) assert.equal(event.subject, org);
      const headers = cloudEventHeaders({ id: "1", type: "t", subject: "", time: 0, group_uid: org, body_type: "", actor: "{}", body: "{}" } as Parameters<typeof cloudEventHeaders>[0], "https://api.test", "token");
      assert.equal("ce-subject" in headers, false);
    });

    test("registering and redeeming again with the same code answer the same and send no second event", async () => {
      const org = server().org.uid;
      const invite = async () => {
        const made = await call(`/iam/v2/groupInvites/${org}`, { body: { roleUid: builtInRole("viewer").uid, ttl: "3600s" } });
        assert.equal(made.status, 200, JSON.stringify(made.json));
        return made.json.code as string;
      };
      const newcomer = async () => {
        const uid = newChildUid(org);
        await insertIdentity(server().store.db, { uid, group_uid: org, name: "newcomer", description: "", claim_match: "", static_keys: "", last_seen_time: null, create_time: 1, update_time: 1 });
        return (await server().server.tokens.issue({ subject: uid, audience: "http://api.test" })).token;
      };

      const registering = await newcomer();
      const code = await invite();
      const first = await call("/auth/v1/register", { body: { code }, token: registering });
      const again = await call("/auth/v1/register", { body: { code }, token: registering });
      assert.equal(first.status, 200, JSON.stringify(first.json));
      assert.deepEqual(again, first);
      assert.equal((await events("auth.registered")).length, 1);

      const redeeming = await newcomer();
      const other = await invite();
      const redeem = () => call("/platform.iam.v2.GroupInvitesService/RedeemGroupInvite", { body: { code: other }, token: redeeming });
      const once = await redeem();
      assert.equal(once.status, 200, JSON.stringify(once.json));
      assert.deepEqual(await redeem(), once);
      assert.equal((await events("redeem")).length, 1);
    });
  });
}
