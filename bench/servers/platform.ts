import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { newChildUid } from "../../src/aip/uidp.js";
import { bootstrapOrganization } from "../../src/server/bootstrap.js";
import { defaultLimits } from "../../src/config.js";
import { createLogger } from "../../src/logger.js";
import { createFileContentStore } from "../../src/domains/registry/content/content-store.js";
import { MEDIA_TYPE } from "../../src/domains/registry/manifest.js";
import { pushManifest } from "../../src/domains/registry/push.js";
import { createServer } from "../../src/server/server.js";
import { BUILT_IN_ROLES, builtInRole } from "../../src/access/capabilities.js";
import { linkBlob, recordBlob } from "../../src/domains/registry/store/blobs.js";
import { insertGroup, type GroupRow } from "../../src/domains/iam/store/groups.js";
import type { IdentityRow } from "../../src/domains/iam/store/identities.js";
import { insertRepo } from "../../src/domains/registry/store/repos.js";
import type { RoleBindingRow } from "../../src/domains/iam/store/role-bindings.js";
import type { TagHistoryRow } from "../../src/domains/registry/store/tag-history.js";
import { upsertTag, type TagRow } from "../../src/domains/registry/store/tags.js";
import pg from "pg";
import { openStore } from "../../src/server/open-store.js";
import { POSTGRES_URL } from "../../test/support/databases.js";
import { announce } from "./messages.js";
import { seedAdvisories } from "./seed-advisories.js";
import { seedLibraries } from "./seed-libraries.js";
import { buildPullImage, PULL_IMAGE, PULL_TAG, type SeededImage } from "./oci-image.js";
import { digestOf, HISTORY_IMAGE, HISTORY_RECORDS, HISTORY_TAG, historyTime, ORGANIZATION_NAME } from "./tag-history.js";

/**
 * The platform server as `serve` runs it (SQLite file in WAL mode, silent
 * logger), over a store holding one organization, its owner, a folder and
 * CHILD_COUNT groups directly below the folder, plus the IAM tree of
 * `seedIamTree`, the registry data of `seedRegistry` and `seedPullImage`, and the
 * advisories of `seedAdvisories` and the organization's library index of `seedLibraries`.
 * Announces a PlatformReady.
 */

const CHILD_COUNT = 10_000;
/** The IAM figures' tree: groups, and role bindings spread over it. */
const TREE_SIZE = 1_000;
const BINDING_COUNT = 10_000;
const BINDINGS_PER_IDENTITY = 4;
/** Tags of the ListTags figure's repo. */
const TAG_COUNT = 10_000;
const API_URL = "http://bench.local";
const REGISTRY_URL = "http://registry.bench.local";
/** Rows per INSERT: 6 columns each, well below SQLite's bound-parameter limit. */
const CHUNK = 500;

const dir = mkdtempSync(join(tmpdir(), "platform-bench-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));

const seedStart = performance.now();
/** BENCH_DB=postgres: the store is a fresh database of the local PostgreSQL server (POSTGRES_URL), dropped at the end; otherwise SQLite in `dir`. */
const postgres = process.env.BENCH_DB === "postgres" ? await freshPostgresDatabase() : undefined;
const store = await openStore(postgres?.url ?? join(dir, "bench.db"));
// Blob bytes (the pull figures' image); removed with `dir`.
const contentRoot = join(dir, "content");
const content = createFileContentStore(contentRoot);
const now = Date.now();
const { organization, identity } = await bootstrapOrganization(store, ORGANIZATION_NAME, now);
const repoRow = (name: string) => ({ uid: newChildUid(organization.uid), group_uid: organization.uid, name, description: "", readme: "", create_time: now, update_time: now });
const folder = await insertGroup(store.db, {
  uid: newChildUid(organization.uid),
  parent_uid: organization.uid,
  name: "folder",
  description: "",
  create_time: now,
  update_time: now,
});
const children: GroupRow[] = Array.from({ length: CHILD_COUNT }, (_, i) => ({
  uid: newChildUid(folder.uid),
  parent_uid: folder.uid,
  name: `group-${String(i).padStart(5, "0")}`,
  description: `bench group ${i}`,
  create_time: now,
  update_time: now,
}));
await store.db.transaction().execute(async (trx) => {
  for (let i = 0; i < children.length; i += CHUNK) {
    await trx.insertInto("groups").values(children.slice(i, i + CHUNK)).execute();
  }
});
const iam = await seedIamTree();
const registryStart = performance.now();
const registry = await seedRegistry();
const imageStart = performance.now();
const image = await seedPullImage();
const imageSeedMs = performance.now() - imageStart;
const registrySeedMs = performance.now() - registryStart;
const advisories = await seedAdvisories(store.db);
const libraries = await seedLibraries(store.db, organization.uid);
const seedMs = performance.now() - seedStart;

/**
 * A tree of TREE_SIZE groups below the organization (10 children per group,
 * breadth first), one identity per IDENTITY_EVERY groups, and
 * BINDINGS_PER_IDENTITY built-in role bindings per identity on groups of its
 * subtree (own group first): BINDING_COUNT bindings in all. The caller is an
 * identity in a deepest group, bound `viewer` on that group's parent.
 */
async function seedIamTree() {
  const groups: GroupRow[] = [];
  for (let i = 0; groups.length < TREE_SIZE; i++) {
    const parent = i < 10 ? organization.uid : groups[Math.floor((i - 10) / 10)].uid;
    const row = { uid: newChildUid(parent), parent_uid: parent, name: `tree-${i}`, description: "", create_time: now, update_time: now };
    groups.push(row);
  }
  const roles = BUILT_IN_ROLES.map((r) => r.uid);
  const identities: IdentityRow[] = [];
  const bindings: RoleBindingRow[] = [];
  for (let i = 0; identities.length * BINDINGS_PER_IDENTITY < BINDING_COUNT; i++) {
    const home = groups[(i * 7) % groups.length];
    identities.push({ uid: newChildUid(home.uid), group_uid: home.uid, name: `workload-${i}`, description: "", claim_match: "", static_keys: "", pull_token_hash: "", pull_token_expire_time: null, last_seen_time: null, create_time: now, update_time: now });
    for (let b = 0; b < BINDINGS_PER_IDENTITY; b++) {
      bindings.push({ uid: newChildUid(home.uid), group_uid: home.uid, identity_uid: identities[identities.length - 1].uid, role_uid: roles[b % roles.length], create_time: now });
    }
  }
  // The last (deepest) group; the caller sees its parent's subtree.
  const deep = groups[groups.length - 1];
  const scope = deep.parent_uid;
  const caller: IdentityRow = { uid: newChildUid(deep.uid), group_uid: deep.uid, name: "caller", description: "", claim_match: "", static_keys: "", pull_token_hash: "", pull_token_expire_time: null, last_seen_time: null, create_time: now, update_time: now };
  const callerBinding: RoleBindingRow = { uid: newChildUid(scope), group_uid: scope, identity_uid: caller.uid, role_uid: builtInRole("viewer").uid, create_time: now };
  await store.db.transaction().execute(async (trx) => {
    for (let i = 0; i < groups.length; i += CHUNK) await trx.insertInto("groups").values(groups.slice(i, i + CHUNK)).execute();
    for (let i = 0; i < identities.length; i += 100) await trx.insertInto("identities").values(identities.slice(i, i + 100)).execute();
    for (let i = 0; i < bindings.length; i += CHUNK) await trx.insertInto("role_bindings").values(bindings.slice(i, i + CHUNK)).execute();
    await trx.insertInto("identities").values(caller).execute();
    await trx.insertInto("role_bindings").values(callerBinding).execute();
  });
  const inScope = (uid: string) => uid === scope || uid.startsWith(`${scope}/`);
  const visibleBindings = bindings.filter((b) => inScope(b.group_uid)).length + 1;
  const target = identities.find((i) => inScope(i.group_uid) && i.group_uid !== scope) ?? caller;
  return { caller, scope, visibleBindings, identityUid: target.uid, groupCount: groups.length, bindingCount: bindings.length + 1 };
}

/**
 * Two repos of the organization: `many-tags` with TAG_COUNT tags (bulk inserts,
 * each tag with the one history record its creation writes), and
 * HISTORY_IMAGE whose tag HISTORY_TAG moved to HISTORY_RECORDS digests, one a
 * minute, through `upsertTag` (the write path of CreateTag). One transaction.
 */
async function seedRegistry() {
  return store.db.transaction().execute(async (trx) => {
    const tagged = await insertRepo(trx, repoRow("many-tags"));
    const tags: TagRow[] = Array.from({ length: TAG_COUNT }, (_, i) => ({
      uid: newChildUid(tagged.uid),
      repo_uid: tagged.uid,
      name: `tag-${String(i).padStart(5, "0")}`,
      digest: digestOf(i),
      deprecated: 0,
      forms: 0,
      create_time: now,
      update_time: now,
      push_time: 0,
    }));
    const created: TagHistoryRow[] = tags.map((t) => ({ repo_uid: t.repo_uid, tag_name: t.name, seq: 1, digest: t.digest, update_time: now }));
    for (let i = 0; i < tags.length; i += CHUNK) await trx.insertInto("tags").values(tags.slice(i, i + CHUNK)).execute();
    for (let i = 0; i < created.length; i += CHUNK) await trx.insertInto("tag_history").values(created.slice(i, i + CHUNK)).execute();

    const app = await insertRepo(trx, repoRow(HISTORY_IMAGE));
    for (let n = 0; n < HISTORY_RECORDS; n++) {
      await upsertTag(trx, app.uid, { name: HISTORY_TAG, digest: digestOf(n), deprecated: false }, historyTime(n));
    }
    const { records } = await trx
      .selectFrom("tag_history")
      .select((eb) => eb.fn.countAll<number>().as("records"))
      .where("repo_uid", "=", app.uid)
      .where("tag_name", "=", HISTORY_TAG)
      .executeTakeFirstOrThrow();
    if (Number(records) !== HISTORY_RECORDS) throw new Error(`seeded ${records} history records, expected ${HISTORY_RECORDS}`);
    return { repoUid: tagged.uid, tagCount: TAG_COUNT };
  });
}

/**
 * The repo PULL_IMAGE with the image of `buildPullImage` (a 50 MB random layer), tagged
 * PULL_TAG, stored as a finished push leaves it: the blobs written by the server's
 * content store and recorded and linked to the repo, then the manifest through
 * `pushManifest` (the write path of a manifest PUT: checks the blobs, reads the
 * config, moves the tag). Checks that the layer's file is where the announcement says.
 */
async function seedPullImage(): Promise<SeededImage> {
  const built = buildPullImage();
  const layerDigest = await content.put(built.layer);
  const configDigest = await content.put(built.config);
  const repo = await insertRepo(store.db, repoRow(PULL_IMAGE));
  await store.db.transaction().execute(async (trx) => {
    for (const [digest, size] of [[layerDigest, built.layer.length], [configDigest, built.config.length]] as const) {
      await recordBlob(trx, digest, size, now);
      await linkBlob(trx, repo.uid, digest);
    }
  });
  const mediaType = MEDIA_TYPE.ociManifest;
  const { digest } = await pushManifest(store.db, content, repo, { reference: PULL_TAG, bytes: built.manifest, contentType: mediaType, now });
  const hex = layerDigest.slice("sha256:".length);
  const file = join(contentRoot, "blobs", "sha256", hex.slice(0, 2), hex);
  if (statSync(file).size !== built.layer.length) throw new Error(`${file} does not hold the ${built.layer.length} bytes of the layer`);
  return { layer: { digest: layerDigest, size: built.layer.length, file }, manifest: { digest, mediaType, text: built.manifest.toString("utf8") } };
}

const server = await createServer(
  store,
  { apiUrl: API_URL, registryUrl: REGISTRY_URL, logLevel: "silent", limits: defaultLimits },
  createLogger("silent"),
  content,
);
const port = await new Promise<number>((resolve) =>
  server.api.server.listen(0, "127.0.0.1", () => resolve((server.api.server.address() as AddressInfo).port)),
);
const { token } = await server.tokens.issue({ subject: identity.uid, audience: API_URL });
const { token: deepToken } = await server.tokens.issue({ subject: iam.caller.uid, audience: API_URL });
const registryPort = await new Promise<number>((resolve) =>
  server.registry.server.listen(0, "127.0.0.1", () => resolve((server.registry.server.address() as AddressInfo).port)),
);
// The owner's platform token for the registry audience, which /token exchanges for registry tokens.
const { token: registryPlatformToken } = await server.tokens.issue({ subject: identity.uid, audience: REGISTRY_URL });

async function freshPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `bench_${randomBytes(5).toString("hex")}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`create database ${name}`);
  return { url: `${POSTGRES_URL.replace(/\/[^/?]*(\?.*)?$/, "")}/${name}`, drop: () => admin(`drop database if exists ${name} with (force)`) };
}

announce({
  kind: "platform",
  port,
  token,
  folderUid: folder.uid,
  childCount: CHILD_COUNT,
  groupUid: children[CHILD_COUNT / 2].uid,
  deep: { token: deepToken, identityUid: iam.identityUid, visibleBindings: iam.visibleBindings, groupCount: iam.groupCount, bindingCount: iam.bindingCount },
  registry: { port: registryPort, platformToken: registryPlatformToken, repoUid: registry.repoUid, tagCount: registry.tagCount, seedMs: registrySeedMs, image, imageSeedMs },
  advisories,
  libraries,
  seedMs,
}, async () => {
  if (!postgres) return;
  await server.close();
  await store.close();
  await postgres.drop();
});
