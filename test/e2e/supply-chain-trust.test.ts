import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import type { JsonObject } from "@bufbuild/protobuf";
import { ImagesService } from "../../gen/platform/registry/v2/images_service_pb.js";
import { TrustService } from "../../gen/platform/registry/v2/trust_service_pb.js";
import { findRepoByPath } from "../../src/domains/registry/store/repos.js";
import {
  attachmentTag,
  attestationManifest,
  COSIGN_SIG_ARTIFACT,
  dsseEnvelope,
  newKey,
  sbomStatement,
  signatureManifest,
  signBytes,
  simpleSigningPayload,
  SPDX_PREDICATE,
  type TestKey,
} from "../support/cosign-signatures.js";
import { dropFresh, testDatabases } from "../support/databases.js";
import { gzipLayer } from "../support/layers.js";
import { blobOf, buildImage, imageOfLayers, writeLayout, type Blob } from "../support/oci-layout.js";
import { inRepo } from "../support/repo.js";
import { registryClient, sha256, type RegistryClient } from "../support/registry-push.js";
import { freePort, skopeoSkip } from "../support/skopeo.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { grpcWire, methodOf, onEveryWire, restWire, violatedFields, type Outcome, type Wire } from "../support/wires.js";

/**
 * Supply-chain trust through the real wires: trusted keys over gRPC (grpc-js) and REST; signatures
 * and attestations made here with node:crypto in cosign's formats, pushed through the registry host
 * as `.sig`/`.att` tags and OCI 1.1 referrers, read back with ListImages; a group's trust policy
 * enforced on pulls over plain HTTP and through skopeo. On SQLite and on PostgreSQL.
 */

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), "platform-api-trust-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const createKey = methodOf(TrustService, "CreateTrustedKey");
const getKey = methodOf(TrustService, "GetTrustedKey");
const listKeys = methodOf(TrustService, "ListTrustedKeys");
const updateKey = methodOf(TrustService, "UpdateTrustedKey");
const deleteKey = methodOf(TrustService, "DeleteTrustedKey");
const updatePolicy = methodOf(TrustService, "UpdateTrustPolicy");
const getPolicy = methodOf(TrustService, "GetTrustPolicy");
const listImages = methodOf(ImagesService, "ListImages");
const getReport = methodOf(ImagesService, "GetVulnerabilityReport");
const CYCLONEDX_PREDICATE = "https://cyclonedx.org/bom";
const fixture = (name: string) => readFileSync(inRepo(`test/fixtures/inventory/${name}`));
/** `npm sbom`'s CycloneDX 1.5 of this project: npm packages only. */
const CDX = JSON.parse(fixture("platform-api.cdx.json").toString()) as { components: Array<{ purl?: string }> };

/** An in-toto v1 statement about `digest` whose predicate is the CycloneDX document above. */
function cycloneDxStatement(digest: string): Buffer {
  const [algorithm, hex] = digest.split(":");
  return Buffer.from(JSON.stringify({ _type: "https://in-toto.io/Statement/v1", predicateType: CYCLONEDX_PREDICATE, subject: [{ name: "registry.test/acme/app", digest: { [algorithm]: hex } }], predicate: CDX }));
}

for (const database of await testDatabases()) {
  describe(`supply-chain trust on ${database.name}`, { skip: database.skip }, () => {
    let server: TestServer;
    let dbUrl: string | undefined;
    let host: string;
    let registryToken: string;
    let client: RegistryClient;
    let grpc: Wire;
    let rest: Wire;
    let repoUid: string;
    const trusted = newKey("p256");
    const untrusted = newKey("p256");
    const later = newKey("p256");
    let trustedUid = "";
    const images = new Map<string, Blob>();

    const token = () => server.ownerToken;
    const call = (wire: Wire, method: typeof createKey, request: JsonObject, path: string, httpMethod = "GET", body?: JsonObject): Promise<Outcome> =>
      wire.call(method, request, { method: httpMethod, path, body }, token());
    const addKey = (wire: Wire, parent: string, key: JsonObject) => call(wire, createKey, { parent, trustedKey: key }, `/registry/v2/trustedKeys/${parent}`, "POST", key);
    const imagesOf = async (query = ""): Promise<Array<{ digest: string; verifiedBy?: string[]; verifiedAttestations?: string[] }>> => {
      const outcome = await call(rest, listImages, { repoUid }, `/registry/v2/repos/${repoUid}/images${query}`);
      assert.equal(outcome.code, 0, outcome.message);
      return (outcome.body!.images as Array<{ digest: string; verifiedBy?: string[]; verifiedAttestations?: string[] }>) ?? [];
    };
    const verifiedBy = async (digest: string) => (await imagesOf(`?digest=${digest}`))[0]?.verifiedBy ?? [];
    const setPolicy = async (policy: JsonObject) => {
      const outcome = await call(grpc, updatePolicy, { trustPolicy: { uid: server.org.uid, ...policy }, updateMask: "mode,exemptRepos" }, "");
      assert.equal(outcome.code, 0, outcome.message);
      return outcome.body!;
    };

    /** Pushes an image under `tag` and answers its manifest. */
    const pushImage = async (tag: string) => {
      const image = buildImage({ architecture: "amd64", label: tag });
      await client.pushImage("acme/app", tag, image);
      images.set(tag, image.manifest);
      return image.manifest;
    };
    const pushManifest = async (reference: string, built: { manifest: Buffer; blobs: Blob[] }) => {
      for (const blob of built.blobs) await client.pushBlob("acme/app", blob.bytes);
      const put = await client.request("PUT", `/v2/acme/app/manifests/${reference}`, { body: built.manifest, headers: { "content-type": "application/vnd.oci.image.manifest.v1+json" } });
      assert.equal(put.status, 201, put.bytes.toString());
      return put.headers.get("docker-content-digest")!;
    };
    /** A `.sig` manifest for `digest`: `payloadDigest` in the payload, signed by `key` (over other bytes when `tamper`). */
    const pushSignature = (digest: string, key: TestKey, options: { payloadDigest?: string; tamper?: boolean; referrer?: Blob } = {}) => {
      const payload = simpleSigningPayload(options.payloadDigest ?? digest);
      const signature = signBytes(key, options.tamper ? simpleSigningPayload(digest, "registry.test/acme/other") : payload);
      if (options.referrer) {
        const built = signatureManifest([{ payload, signature }], { subject: options.referrer, artifactType: COSIGN_SIG_ARTIFACT });
        return pushManifest(sha256(built.manifest), built);
      }
      return pushManifest(attachmentTag(digest, "sig"), signatureManifest([{ payload, signature }]));
    };
    const pull = (reference: string, method = "GET") =>
      client.request(method, `/v2/acme/app/manifests/${reference}`, { headers: { accept: "application/vnd.oci.image.manifest.v1+json,application/vnd.oci.image.index.v1+json" } });

    before(async () => {
      dbUrl = database.name === "sqlite" ? undefined : await database.fresh();
      const port = await freePort();
      host = `127.0.0.1:${port}`;
      server = await startTestServer({ dbUrl, registryUrl: `http://${host}`, registryPort: port });
      registryToken = (await server.server.tokens.issue({ subject: server.ownerUid, audience: `http://${host}` })).token;
      client = registryClient([`http://${host}`], registryToken);
      grpc = grpcWire(server.apiPort);
      rest = restWire(server.apiPort);
      await pushImage("base");
      repoUid = (await findRepoByPath(server.store.db, "acme", "app"))!.uid;
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

    test("a .sig tag or a referrer signed by a trusted key verifies its image; untrusted, tampered or other digests do not", async () => {
      const signed = await pushImage("signed");
      const byReferrer = await pushImage("by-referrer");
      const byStranger = await pushImage("by-stranger");
      const tampered = await pushImage("tampered");
      const misnamed = await pushImage("misnamed");
      await pushSignature(signed.digest, trusted);
      await pushSignature(byReferrer.digest, trusted, { referrer: byReferrer });
      await pushSignature(byStranger.digest, untrusted);
      await pushSignature(tampered.digest, trusted, { tamper: true });
      await pushSignature(misnamed.digest, trusted, { payloadDigest: signed.digest });

      assert.deepEqual(await verifiedBy(signed.digest), [trustedUid]);
      assert.deepEqual(await verifiedBy(byReferrer.digest), [trustedUid]);
      for (const image of [byStranger, tampered, misnamed, images.get("base")!]) assert.deepEqual(await verifiedBy(image.digest), [], image.digest);

      // The filters: by key, any key, none; the same over gRPC.
      const byKey = await onEveryWire([grpc, rest], (w) => call(w, listImages, { repoUid, verifiedBy: trustedUid }, `/registry/v2/repos/${repoUid}/images?verifiedBy=${trustedUid}`));
      assert.deepEqual((byKey.body!.images as JsonObject[]).map((i) => i.digest).sort(), [signed.digest, byReferrer.digest].sort());
      assert.equal(byKey.body!.totalCount, "2");
      assert.deepEqual((await imagesOf("?verifiedBy=*")).map((i) => i.digest).sort(), [signed.digest, byReferrer.digest].sort());
      const unverified = (await imagesOf("?unverified=true")).map((i) => i.digest);
      assert.ok(unverified.includes(tampered.digest) && !unverified.includes(signed.digest));
      const both = await call(rest, listImages, {}, `/registry/v2/repos/${repoUid}/images?unverified=true&verifiedBy=*`);
      assert.equal(both.code, 3);
      assert.deepEqual(violatedFields(both), ["unverified"]);
    });

    test("in-toto attestations in DSSE envelopes are verified over their PAE, for the digest they name", async () => {
      const attested = await pushImage("attested");
      const forged = await pushImage("forged");
      const elsewhere = await pushImage("elsewhere");
      await pushManifest(attachmentTag(attested.digest, "att"), attestationManifest([dsseEnvelope(sbomStatement(attested.digest), trusted)]));
      await pushManifest(attachmentTag(forged.digest, "att"), attestationManifest([dsseEnvelope(sbomStatement(forged.digest), trusted, { tamper: true }), dsseEnvelope(sbomStatement(forged.digest), untrusted)]));
      await pushManifest(attachmentTag(elsewhere.digest, "att"), attestationManifest([dsseEnvelope(sbomStatement(attested.digest), trusted)]));
      const [image] = await imagesOf(`?digest=${attested.digest}`);
      assert.deepEqual(image.verifiedAttestations, [SPDX_PREDICATE]);
      assert.deepEqual(image.verifiedBy ?? [], [], "an attestation is no signature");
      for (const other of [forged, elsewhere]) assert.deepEqual((await imagesOf(`?digest=${other.digest}`))[0].verifiedAttestations ?? [], [], other.digest);
    });

    test("a verified SBOM attestation is the report's inventory, and the report says so; an unverified one leaves the layers read", async () => {
      const reports = server.server.workers.get("reports")!;
      /** An image whose one layer is an Alpine apk database (musl, busybox, ...), pushed under `tag`. */
      const pushApkImage = async (tag: string) => {
        const layer = blobOf(await gzipLayer([{ name: "etc/os-release", content: fixture("alpine-3.19.os-release") }, { name: "lib/apk/db/installed", content: fixture("alpine-3.19.installed") }]), "application/vnd.oci.image.layer.v1.tar+gzip");
        const image = imageOfLayers("amd64", [layer], { labels: { test: tag } });
        await client.pushImage("acme/app", tag, image);
        return image.manifest;
      };
      const reportOf = async (digest: string) => {
        // The same answer over gRPC and REST (onEveryWire compares them).
        const outcome = await onEveryWire([grpc, rest], (w) => call(w, getReport, { repoUid, digest }, `/registry/v2/repos/${repoUid}/digests/${digest}/vulnerabilityReport`));
        assert.equal(outcome.code, 0, outcome.message);
        return outcome.body! as { status: string; packageCount?: number; packageSource?: string };
      };
      const purls = async (digest: string) =>
        (await server.store.db.selectFrom("image_packages").select("purl").where("digest", "=", digest).execute()).map((r) => r.purl);
      const npmCount = new Set(CDX.components.map((c) => c.purl).filter((p) => p?.startsWith("pkg:npm/"))).size;

      const signed = await pushApkImage("sbom-trusted");
      const unsigned = await pushApkImage("sbom-untrusted");
      await pushManifest(attachmentTag(signed.digest, "att"), attestationManifest([dsseEnvelope(cycloneDxStatement(signed.digest), trusted)], CYCLONEDX_PREDICATE));
      await pushManifest(attachmentTag(unsigned.digest, "att"), attestationManifest([dsseEnvelope(cycloneDxStatement(unsigned.digest), untrusted)], CYCLONEDX_PREDICATE));
      await reports.drain!();

      const fromAttestation = await reportOf(signed.digest);
      assert.equal(fromAttestation.status, "STATUS_DONE");
      assert.equal(fromAttestation.packageSource, "attestation:release");
      const attested = await purls(signed.digest);
      assert.ok(attested.includes("pkg:npm/%40bufbuild/protobuf@2.17.0"), "B: the attestation's packages");
      assert.ok(!attested.some((p) => p.startsWith("pkg:apk/")), "not A: the layers are not read");
      assert.equal(fromAttestation.packageCount, attested.length);
      assert.equal(attested.length, npmCount);

      const fromLayers = await reportOf(unsigned.digest);
      assert.equal(fromLayers.status, "STATUS_DONE");
      assert.equal(fromLayers.packageSource, "layers");
      const scanned = await purls(unsigned.digest);
      assert.ok(scanned.some((p) => p.startsWith("pkg:apk/alpine/musl@")), "A: the layers' apk packages");

      // A key created later that verifies the attestation already stored: the report is made again from it.
      const sbomKey = newKey("p256");
      const late = await pushApkImage("sbom-late");
      await pushManifest(attachmentTag(late.digest, "att"), attestationManifest([dsseEnvelope(cycloneDxStatement(late.digest), sbomKey)], CYCLONEDX_PREDICATE));
      await reports.drain!();
      assert.equal((await reportOf(late.digest)).packageSource, "layers");
      const made = await addKey(grpc, server.org.uid, { name: "sbom-signer", publicKeyPem: sbomKey.publicPem });
      assert.equal(made.code, 0, made.message);
      await reports.drain!();
      assert.equal((await reportOf(late.digest)).packageSource, "attestation:sbom-signer");
      assert.ok(!(await purls(late.digest)).some((p) => p.startsWith("pkg:apk/")));
      const gone = await call(rest, deleteKey, {}, `/registry/v2/trustedKeys/${made.body!.uid as string}`, "DELETE");
      assert.equal(gone.code, 0, gone.message);
    });

    let laterUid = "";
    test("a key created later verifies the signatures pushed before it; a deleted key no longer verifies", async () => {
      const early = await pushImage("early");
      await pushSignature(early.digest, later);
      assert.deepEqual(await verifiedBy(early.digest), []);
      const made = await addKey(rest, server.org.uid, { name: "later", publicKeyPem: later.publicPem });
      assert.equal(made.code, 0, made.message);
      laterUid = made.body!.uid as string;
      assert.deepEqual(await verifiedBy(early.digest), [laterUid]);
      const gone = await call(rest, deleteKey, {}, `/registry/v2/trustedKeys/${laterUid}`, "DELETE");
      assert.equal(gone.code, 0, gone.message);
      assert.deepEqual(await verifiedBy(early.digest), []);
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

    test("warn serves an unverified pull and counts it; enforce refuses it with DENIED naming the policy, over plain HTTP", async () => {
      const metric = async () => {
        const text = await (await fetch(`http://127.0.0.1:${server.metricsPort}/metrics`)).text();
        return Number(/platform_registry_unverified_pulls_total\{mode="warn"\} (\d+)/.exec(text)?.[1] ?? 0);
      };
      const before = await metric();
      assert.equal((await pull("base")).status, 200);
      assert.equal(await metric(), before + 1);

      await setPolicy({ mode: "MODE_ENFORCE" });
      for (const [reference, method] of [["base", "GET"], ["base", "HEAD"], [images.get("base")!.digest, "GET"], ["tampered", "GET"]]) {
        const refused = await pull(reference, method);
        assert.equal(refused.status, 403, `${method} ${reference}`);
        if (method === "GET") {
          const error = (JSON.parse(refused.bytes.toString()) as { errors: Array<{ code: string; message: string; detail: { policy: { group: string; mode: string } } }> }).errors[0];
          assert.equal(error.code, "DENIED");
          assert.match(error.message, /trust policy \(enforce\)/);
          assert.deepEqual(error.detail.policy, { group: server.org.uid, mode: "enforce" });
        }
      }
      // Signed images (by tag, by digest, HEAD), and the signatures and attestations themselves, pull.
      const signed = images.get("signed")!;
      for (const [reference, method] of [["signed", "GET"], ["signed", "HEAD"], [signed.digest, "GET"], ["by-referrer", "GET"], [attachmentTag(signed.digest, "sig"), "GET"], [attachmentTag(images.get("attested")!.digest, "att"), "GET"]]) {
        assert.equal((await pull(reference, method)).status, 200, `${method} ${reference}`);
      }
      const referrers = await client.request("GET", `/v2/acme/app/referrers/${images.get("by-referrer")!.digest}`);
      const referrer = (JSON.parse(referrers.bytes.toString()) as { manifests: Array<{ digest: string }> }).manifests[0].digest;
      assert.equal((await pull(referrer)).status, 200, "a referrer artifact pulls");
      // The token endpoint keeps answering.
      const tokenAnswer = await fetch(`http://${host}/token?scope=repository:acme/app:pull`, { headers: { authorization: `Basic ${Buffer.from(`_token:${registryToken}`).toString("base64")}` } });
      assert.equal(tokenAnswer.status, 200);
      // An exempt repo pattern lets the repo's unsigned images through.
      await setPolicy({ mode: "MODE_ENFORCE", exemptRepos: ["ap*"] });
      assert.equal((await pull("base")).status, 200);
      await setPolicy({ mode: "MODE_ENFORCE", exemptRepos: [] });
    });

    test("enforce through skopeo: an unsigned image is refused, a signed one copies", { skip: skopeoSkip }, async () => {
      const layout = writeLayout(join(dir, `${database.name}-signed-source`), { architectures: ["amd64"], ref: "v1", label: "signed" });
      const unsigned = writeLayout(join(dir, `${database.name}-unsigned-source`), { architectures: ["amd64"], ref: "v1", label: "unsigned" });
      await setPolicy({ mode: "MODE_OFF" });
      const creds = `_token:${registryToken}`;
      const skopeo = (...args: string[]) => run("skopeo", ["--insecure-policy", ...args], { timeout: 60_000, env: { ...process.env, HOME: dir } });
      await skopeo("copy", "--dest-tls-verify=false", "--dest-creds", creds, `oci:${layout.dir}:v1`, `docker://${host}/acme/app:skopeo-signed`);
      await skopeo("copy", "--dest-tls-verify=false", "--dest-creds", creds, `oci:${unsigned.dir}:v1`, `docker://${host}/acme/app:skopeo-unsigned`);
      await setPolicy({ mode: "MODE_ENFORCE" });
      await assert.rejects(
        skopeo("copy", "--src-tls-verify=false", "--src-creds", creds, `docker://${host}/acme/app:skopeo-unsigned`, `oci:${join(dir, `${database.name}-unsigned`)}:v1`),
        (error: Error & { stderr?: string }) => /denied|trust policy/i.test(error.stderr ?? error.message),
      );
      await pushSignature(layout.top.digest, trusted);
      await skopeo("copy", "--src-tls-verify=false", "--src-creds", creds, `docker://${host}/acme/app:skopeo-signed`, `oci:${join(dir, `${database.name}-signed`)}:v1`);
    });

    test("skopeo's own sigstore signing", { skip: skopeoSkip }, async (t) => {
      // Debian bookworm's skopeo 1.9.3 parses the flag but refuses to sign: "Debian-local change: sigstore disabled".
      const layout = writeLayout(join(dir, `${database.name}-sigstore-source`), { architectures: ["amd64"], ref: "v1", label: "sigstore" });
      writeFileSync(join(dir, "probe.key"), "not a key\n");
      writeFileSync(join(dir, "probe.pass"), "secret\n");
      await setPolicy({ mode: "MODE_OFF" });
      // Run asynchronously: the registry answering it is in this process.
      const output = await run(
        "skopeo",
        ["--insecure-policy", "copy", "--dest-tls-verify=false", "--dest-creds", `_token:${registryToken}`, "--sign-by-sigstore-private-key", join(dir, "probe.key"), "--sign-passphrase-file", join(dir, "probe.pass"), `oci:${layout.dir}:v1`, `docker://${host}/acme/app:sigstore-probe`],
        { env: { ...process.env, HOME: dir }, timeout: 60_000 },
      ).then(
        ({ stdout, stderr }) => `${stdout}${stderr}`,
        (error: Error & { stdout?: string; stderr?: string }) => `${error.stdout ?? ""}${error.stderr ?? error.message}`,
      );
      if (/sigstore disabled/i.test(output)) {
        t.skip("this skopeo is built with sigstore disabled (Debian-local change: sigstore disabled); signing with it needs upstream skopeo 1.10+ or Debian trixie's");
        return;
      }
      t.skip(`a skopeo that signs with sigstore is installed (it answered: ${output.trim().split("\n").pop()}), but the test signing with it (cosign's encrypted key form) is not written yet`);
    });
  });
}
