import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { decodeProtectedHeader } from "jose";
import { bootstrapChild, runCli, startChildServer } from "../support/child-server.js";

/** `platform-api keys rotate` and `keys list` beside a running server, through the real command line. */
const dir = mkdtempSync(join(tmpdir(), "platform-api-keys-"));
const db = join(dir, "platform.db");
after(() => rmSync(dir, { recursive: true, force: true }));

const kidOf = (token: string) => decodeProtectedHeader(token).kid;

test("keys rotate: the running server accepts tokens of the new key at once and publishes it; keys list shows which signs", { timeout: 240_000 }, async () => {
  const boot = await bootstrapChild(db, "keys");
  const server = await startChildServer({ db, registryDir: join(dir, "registry") });
  try {
    const getOrg = (token: string) => fetch(`${server.apiUrl}/iam/v2/groups/${boot.org.uid}`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal((await getOrg(boot.ownerToken)).status, 200);

    const rotation = JSON.parse(await runCli("keys", "rotate", "--activate-in", "0s", "--db", db)) as { kid: string; activate_time: string; removed: string[] };
    assert.deepEqual(rotation.removed, []);
    const token = (await runCli("token", "--identity", boot.ownerUid, "--db", db, "--api-url", "http://platform.test")).trim();
    assert.equal(kidOf(token), rotation.kid, "the CLI signs with the active new key");

    assert.equal((await getOrg(token)).status, 200, "the server read the keys again for the new kid");
    assert.equal((await getOrg(boot.ownerToken)).status, 200, "tokens of the old key stay valid");
    const jwks = (await (await fetch(`${server.apiUrl}/.well-known/jwks.json`)).json()) as { keys: Array<{ kid: string }> };
    assert.deepEqual(jwks.keys.map((k) => k.kid).sort(), [kidOf(boot.ownerToken), rotation.kid].sort());

    const listed = JSON.parse(await runCli("keys", "list", "--db", db)) as { keys: Array<{ kid: string; state: string }> };
    assert.deepEqual(
      listed.keys.map((k) => [k.kid, k.state]),
      [
        [kidOf(boot.ownerToken), "verifying"],
        [rotation.kid, "signing"],
      ],
    );

    const pending = JSON.parse(await runCli("keys", "rotate", "--db", db)) as { kid: string; activate_time: string };
    assert.ok(Date.parse(pending.activate_time) - Date.now() > 9 * 60_000, "by default a new key signs 10 minutes later");
    assert.equal(kidOf((await runCli("token", "--identity", boot.ownerUid, "--db", db)).trim()), rotation.kid);

    await assert.rejects(runCli("keys", "rotate", "--activate-in", "soon", "--db", db), (e: { code: number; stderr: string }) => e.code === 2 && /--activate-in/.test(e.stderr));
    await assert.rejects(runCli("keys"), (e: { code: number; stderr: string }) => e.code === 2 && /rotate or list/.test(e.stderr));
  } finally {
    server.child.kill("SIGTERM");
    await server.exit;
  }
});
