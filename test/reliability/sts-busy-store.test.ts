import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import SqliteDatabase from "better-sqlite3";
import { decodeJwt, exportJWK, generateKeyPair, SignJWT } from "jose";
import { newChildUid } from "../../src/aip/uidp.js";
import { insertIdentity } from "../../src/domains/iam/store/identities.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

/**
 * The token exchange with the SQLite write lock held by another process: the exchange reads the
 * identity (reads are not blocked) and issues the token; recording when the identity was last seen
 * is bookkeeping, skipped when the store is too busy, never a 500.
 */
const ISSUER = "https://ci.example.com";

let dir: string;
let server: TestServer;
let other: SqliteDatabase.Database;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "platform-api-sts-lock-"));
  const file = join(dir, "platform.db");
  server = await startTestServer({ dbUrl: file, limits: { lockTimeoutMs: 300 }, logLevel: "silent" });
  other = new SqliteDatabase(file);
});

after(async () => {
  if (other.inTransaction) other.exec("rollback");
  other.close();
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

test("an exchange while another process holds the write lock answers a token (last seen not recorded), not a 500", async () => {
  const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid: "k1", alg: "ES256" };
  const uid = newChildUid(server.org.uid);
  await insertIdentity(server.store.db, {
    uid,
    group_uid: server.org.uid,
    name: "deployer",
    description: "",
    claim_match: "",
    static_keys: JSON.stringify({ issuer: ISSUER, subject: "deployer", issuerKeys: { keys: [jwk] } }),
    last_seen_time: null,
    create_time: 1,
    update_time: 1,
  });
  const upstream = await new SignJWT({ iss: ISSUER, sub: "deployer" }).setProtectedHeader({ alg: "ES256", kid: "k1" }).setIssuedAt().setExpirationTime("5m").sign(privateKey);
  other.exec("begin immediate");
  try {
    const res = await fetch(`${server.apiUrl}/sts/exchange?identity=${uid}`, { method: "POST", headers: { authorization: `Bearer ${upstream}` } });
    const body = (await res.json()) as { token?: string };
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(decodeJwt(body.token!).sub, uid);
  } finally {
    other.exec("commit");
  }
  const row = await server.store.db.selectFrom("identities").select("last_seen_time").where("uid", "=", uid).executeTakeFirstOrThrow();
  assert.equal(row.last_seen_time, null, "the busy store recorded nothing");
});
