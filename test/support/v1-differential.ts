import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { DescService, JsonObject } from "@bufbuild/protobuf";
import { GroupsService } from "../../gen/platform/iam/v2/groups_service_pb.js";
import { testDatabases } from "./databases.js";
import { serveOverWires, type ServedWires } from "./over-wires.js";
import type { TestServer } from "./test-server.js";
import { methodOf, type Outcome, type RestRequest } from "./wires.js";

/**
 * The v1/v2 differential harness (issue 15): for every resource kind both versions have, on every
 * wire, a resource written through v1 reads the same through v2 and one written through v2 reads
 * the same through v1, through create, update (v1 PUT, v2 PATCH), list and delete. A domain adds
 * its kinds to a table and calls `describeDifferential` (test/e2e/v1-differential*.test.ts).
 */

/** One call: the RPC (service and method name), its request as proto JSON, and its REST form. */
export interface Call {
  service: DescService;
  method: string;
  request: JsonObject;
  rest: RestRequest;
}

/** What a kind's `setup` made for one test: at least `parent`, the uid the resource is created under. */
export type Setup = Record<string, string> & { parent: string };

/** What `setup` may use: calls over the Connect wire with the owner's token (they must succeed). */
export interface Harness {
  server: TestServer;
  ok(call: Call): Promise<JsonObject>;
}

export interface DifferentialKind {
  /** The resource, in test names. */
  name: string;
  /** Makes what the resource needs (its parent, referenced resources) below `group`, a fresh group. */
  setup(h: Harness, group: string): Promise<Setup>;
  v1: {
    create(s: Setup): Call;
    /**
     * A full replacement of `created` (its v1 JSON) that changes a field and leaves an optional
     * one out. Absent when v1 has no Update.
     */
    update?(s: Setup, created: JsonObject): Call;
    /** The List filtered on `id`. */
    list(id: string): Call;
    delete(id: string): Call;
  };
  v2: {
    create(s: Setup): Call;
    /** A PATCH of `created` (its v2 JSON) that changes a field. Absent when v2 has no Update. */
    update?(s: Setup, created: JsonObject): Call;
    get(uid: string): Call;
    delete(uid: string): Call;
  };
  /** The v1 item (proto JSON) of a resource, from its v2 JSON: what both versions must agree on. */
  toV1(v2: JsonObject): JsonObject;
  /** The field naming the resource in v1 answers; `id` unless said. */
  v1Id?: string;
  /**
   * Asserts that v1's Create answer agrees with the v2 resource, where the answer has another
   * shape than a listed item (an invite's code); default: it equals `toV1(v2)`.
   */
  createdAgrees?(created: JsonObject, v2: JsonObject): void;
}

/** `rest` helper: a REST request. */
export function rest(method: string, path: string, body?: JsonObject): RestRequest {
  return body === undefined ? { method, path } : { method, path, body };
}

/** `value` without its undefined entries (proto JSON omits unset fields). */
export function defined(value: Record<string, unknown>): JsonObject {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as JsonObject;
}

/** Registers, for each wire of `served` and each kind, the two differential tests. */
export function describeDifferential(title: string, kinds: DifferentialKind[], served: ServedWires): void {
  served.describeOverWires(title, (over) => {
    const { wireName } = over;
    for (const kind of kinds) {
      const idOf = (body: JsonObject | undefined) => String(body?.[kind.v1Id ?? "id"] ?? "");
      const context = async () => {
        const server = over.server();
        const wire = over.wire();
        const send = (c: Call): Promise<Outcome> => wire.call(methodOf(c.service, c.method), c.request, c.rest, server.ownerToken);
        const harness: Harness = {
          server,
          ok: async (c) => {
            const out = await served.wire("connect").call(methodOf(c.service, c.method), c.request, c.rest, server.ownerToken);
            assert.equal(out.code, 0, `setup ${c.method}: ${out.message}`);
            return out.body ?? {};
          },
        };
        const body = { name: `${kind.name.replace(/[^a-z0-9]/g, "-")}-${wireName}-${Math.random().toString(16).slice(2, 8)}` };
        const group = await harness.ok({
          service: GroupsService,
          method: "CreateGroup",
          request: { parent: server.org.uid, group: body },
          rest: rest("POST", `/iam/v2/groups/${server.org.uid}`, body),
        });
        const setup = await kind.setup(harness, group.uid as string);
        const expectOk = async (c: Call): Promise<JsonObject> => {
          const out = await send(c);
          assert.equal(out.code, 0, `${c.service.typeName}/${c.method}: ${out.message}`);
          return out.body ?? {};
        };
        const listed = async (id: string): Promise<JsonObject[]> => {
          const out = await send(kind.v1.list(id));
          assert.equal(out.code, 0, `v1 List: ${out.message}`);
          if (wireName === "rest") assert.equal(out.httpStatus, 200);
          return (out.body?.items as JsonObject[] | undefined) ?? [];
        };
        return { send, expectOk, listed, setup };
      };

      test(`${kind.name}: written through v1, read through v2`, async () => {
        const { send, expectOk, listed, setup } = await context();
        const created = await expectOk(kind.v1.create(setup));
        const id = idOf(created);
        assert.notEqual(id, "", "the v1 answer names the resource");
        const read = await expectOk(kind.v2.get(id));
        if (kind.createdAgrees) kind.createdAgrees(created, read);
        else assert.deepEqual(created, kind.toV1(read), "v2 reads what v1 created");
        assert.deepEqual(await listed(id), [kind.toV1(read)], "the v1 List by id agrees");

        if (kind.v1.update) {
          const updated = await expectOk(kind.v1.update(setup, created));
          assert.notDeepEqual(updated, created, "the v1 update changed something");
          const afterUpdate = await expectOk(kind.v2.get(id));
          assert.deepEqual(updated, kind.toV1(afterUpdate), "v2 reads what the v1 PUT wrote, omitted fields reset");
          assert.deepEqual(await listed(id), [updated], "the v1 List by id agrees");
        }

        await expectOk(kind.v1.delete(id));
        const gone = await send(kind.v2.get(id));
        assert.equal(gone.code, 5, "v2 Get after the v1 delete is NOT_FOUND");
        assert.deepEqual(await listed(id), [], "v1 List of a deleted resource is empty (HTTP 200)");
      });

      test(`${kind.name}: written through v2, read through v1`, async () => {
        const { expectOk, listed, setup } = await context();
        const created = await expectOk(kind.v2.create(setup));
        const uid = String(created.uid);
        assert.deepEqual(await listed(uid), [kind.toV1(await expectOk(kind.v2.get(uid)))], "v1 lists what v2 created");

        if (kind.v2.update) {
          const updated = await expectOk(kind.v2.update(setup, created));
          assert.deepEqual(await listed(uid), [kind.toV1(updated)], "v1 lists what the v2 PATCH wrote");
        }

        await expectOk(kind.v2.delete(uid));
        assert.deepEqual(await listed(uid), [], "v1 List after the v2 delete is empty (HTTP 200)");
      });
    }
  });
}

/**
 * `describeDifferential` of `kinds` on each test database (SQLite, and PostgreSQL where it
 * answers): a fresh store and server per database; setup calls go over its Connect wire.
 */
export async function describeDifferentialOnEveryDatabase(title: string, kinds: DifferentialKind[]): Promise<void> {
  for (const database of await testDatabases()) {
    describe(`on ${database.name}`, { skip: database.skip }, () => describeDifferential(title, kinds, serveOverWires({ database })));
  }
}
