import assert from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { JsonObject } from "@bufbuild/protobuf";
import { TrustService } from "../../gen/platform/registry/v2/trust_service_pb.js";
import { newKey } from "../support/cosign-signatures.js";
import { dropFresh, testDatabases } from "../support/databases.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { grpcWire, methodOf, onEveryWire, restWire, violatedFields, type Outcome, type Wire } from "../support/wires.js";

/**
 * Supply-chain trust through the real wires: trusted keys and trust policies over gRPC (grpc-js)
 * and REST. On SQLite and on PostgreSQL.
 */

const dir = mkdtempSync(join(tmpdir(), "platform-api-trust-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const createKey = methodOf(TrustService, "CreateTrustedKey");
const getKey = methodOf(TrustService, "GetTrustedKey");
const listKeys = methodOf(TrustService, "ListTrustedKeys");
const updateKey = methodOf(TrustService, "UpdateTrustedKey");
const deleteKey = methodOf(TrustService, "DeleteTrustedKey");
const updatePolicy = methodOf(TrustService, "UpdateTrustPolicy");
const getPolicy = methodOf(TrustService, "GetTrustPolicy");

for (const database of await testDatabases()) {
  describe(`supply-chain trust on ${database.name}`, { skip: database.skip }, () => {
    let server: TestServer;
    let dbUrl: string | undefined;
    let grpc: Wire;
    let rest: Wire;
    const trusted = newKey("p256");
    let trustedUid = "";

    const token = () => server.ownerToken;
    const call = (wire: Wire, method: typeof createKey, request: JsonObject, path: string, httpMethod = "GET", body?: JsonObject): Promise<Outcome> =>
      wire.call(method, request, { method: httpMethod, path, body }, token());
    const addKey = (wire: Wire, parent: string, key: JsonObject) => call(wire, createKey, { parent, trustedKey: key }, `/registry/v2/trustedKeys/${parent}`, "POST", key);
    const setPolicy = async (policy: JsonObject) => {
      const outcome = await call(grpc, updatePolicy, { trustPolicy: { uid: server.org.uid, ...policy }, updateMask: "mode,exemptRepos" }, "");
      assert.equal(outcome.code, 0, outcome.message);
      return outcome.body!;
    };

    before(async () => {
      dbUrl = database.name === "sqlite" ? undefined : await database.fresh();
      server = await startTestServer({ dbUrl });
      grpc = grpcWire(server.apiPort);
      rest = restWire(server.apiPort);
    });
    after(async () => {
      grpc?.close();
      await server?.close();
      if (dbUrl !== undefined) await dropFresh(dbUrl);
    });

    test("trusted keys are created, read, listed, renamed, refused and deleted, over gRPC and REST", async () => {
      const made = await addKey(grpc, server.org.uid, { name: "release", description: "CI release key", publicKeyPem: trusted.publicPem });
      assert.equal(made.code, 0, made.message);
      trustedUid = made.body!.uid as string;
      assert.equal(made.body!.algorithm, "ecdsa-p256");
      assert.match(made.body!.fingerprint as string, /^sha256:[0-9a-f]{64}$/);
      // Each supported kind over REST.
      for (const [name, kind, algorithm] of [["p384", "p384", "ecdsa-p384"], ["ed", "ed25519", "ed25519"], ["rsa", "rsa", "rsa"]] as const) {
        const other = await addKey(rest, server.org.uid, { name, publicKeyPem: newKey(kind).publicPem });
        assert.equal(other.code, 0, other.message);
        assert.equal(other.body!.algorithm, algorithm);
      }
      const keyless = await addKey(rest, server.org.uid, { name: "keyless", keyless: { issuer: "https://token.actions.githubusercontent.com", subjectPattern: "https://github.com/acme/*" } });
      assert.equal(keyless.code, 0, keyless.message);
      assert.equal(keyless.body!.algorithm, "keyless");

      const got = await onEveryWire([grpc, rest], (w) => call(w, getKey, { uid: trustedUid }, `/registry/v2/trustedKeys/${trustedUid}`));
      assert.equal(got.body!.name, "release");
      const listed = await onEveryWire([grpc, rest], (w) => call(w, listKeys, {}, "/registry/v2/trustedKeys"));
      assert.deepEqual((listed.body!.trustedKeys as JsonObject[]).map((k) => k.name).sort(), ["ed", "keyless", "p384", "release", "rsa"]);
      const byName = await onEveryWire([grpc, rest], (w) => call(w, listKeys, { name: "release" }, "/registry/v2/trustedKeys?name=release"));
      assert.deepEqual((byName.body!.trustedKeys as JsonObject[]).map((k) => k.uid), [trustedUid]);

      const renamed = await call(rest, updateKey, {}, `/registry/v2/trustedKeys/${trustedUid}?updateMask=description`, "PATCH", { description: "the release key" });
      assert.equal(renamed.code, 0, renamed.message);
      assert.equal(renamed.body!.description, "the release key");
      assert.equal(renamed.body!.publicKeyPem, trusted.publicPem);

      // A PEM that does not parse, a private key, an unsupported curve: INVALID_ARGUMENT naming the field, on both wires alike.
      const p521 = generateKeyPairSync("ec", { namedCurve: "secp521r1" }).publicKey.export({ type: "spki", format: "pem" }).toString();
      const privatePem = trusted.privateKey.export({ type: "pkcs8", format: "pem" }).toString();
      for (const [i, pem] of ["-----BEGIN PUBLIC KEY-----\nnot base64\n-----END PUBLIC KEY-----\n", privatePem, p521, ""].entries()) {
        const bad = await onEveryWire([grpc, rest], (w) => addKey(w, server.org.uid, { name: `bad-${i}`, publicKeyPem: pem }));
        assert.equal(bad.code, 3, `case ${i}`);
        assert.deepEqual(violatedFields(bad), ["trusted_key.public_key_pem"], `case ${i}`);
      }
      const sameName = await addKey(rest, server.org.uid, { name: "release", publicKeyPem: newKey().publicPem });
      assert.equal(sameName.code, 6);
      const sameKey = await addKey(grpc, server.org.uid, { name: "again", publicKeyPem: trusted.publicPem });
      assert.equal(sameKey.code, 6);

      // Deleting the keys this test does not use further.
      for (const key of listed.body!.trustedKeys as JsonObject[]) {
        if (key.uid === trustedUid) continue;
        const gone = await call(grpc, deleteKey, { uid: key.uid as string }, `/registry/v2/trustedKeys/${key.uid}`, "DELETE");
        assert.equal(gone.code, 0, gone.message);
      }
      assert.equal((await call(rest, getKey, {}, `/registry/v2/trustedKeys/${keyless.body!.uid}`)).code, 5);
    });




    test("a trust policy is read and set per group; out of its rules it is refused naming the fields", async () => {
      const none = await onEveryWire([grpc, rest], (w) => call(w, getPolicy, { uid: server.org.uid }, `/registry/v2/groups/${server.org.uid}/trustPolicy`));
      assert.equal(none.body!.mode ?? "MODE_UNSPECIFIED", "MODE_UNSPECIFIED");
      const bad = await call(rest, updatePolicy, {}, `/registry/v2/groups/${server.org.uid}/trustPolicy`, "PATCH", { mode: "MODE_UNSPECIFIED", exemptRepos: ["No Spaces"] });
      assert.equal(bad.code, 3);
      assert.deepEqual(violatedFields(bad).sort(), ["trust_policy.exempt_repos[0]", "trust_policy.mode"]);
      const set = await setPolicy({ mode: "MODE_WARN" });
      assert.equal(set.mode, "MODE_WARN");
      const read = await call(grpc, getPolicy, { uid: server.org.uid }, "");
      assert.equal(read.body!.mode, "MODE_WARN");
    });
  });
}
