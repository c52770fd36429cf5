import assert from "node:assert/strict";
import { IdentitiesService } from "../../gen/platform/iam/v2/identities_service_pb.js";
import type { TestServer } from "../support/test-server.js";
import { restWire } from "../support/wires.js";

/** Creates an identity under the server's organization over REST; returns the outcome (uid on success). */
export async function createIdentity(server: TestServer, identity: Record<string, unknown>) {
  const out = await restWire(server.apiPort).call(
    IdentitiesService.method.createIdentity,
    {},
    { method: "POST", path: `/iam/v2/identities/${server.org.uid}`, body: identity as never },
    server.ownerToken,
  );
  return out;
}

/** Creates an identity that must succeed; returns its uid. */
export async function identityUid(server: TestServer, identity: Record<string, unknown>): Promise<string> {
  const out = await createIdentity(server, identity);
  assert.equal(out.code, 0, out.message);
  return out.body!.uid as string;
}

/** `POST /sts/exchange?identity=...` with `bearer`; the HTTP status, the JSON answer and how long it took. */
export async function exchange(server: TestServer, identity: string, bearer: string) {
  const started = performance.now();
  const res = await fetch(`${server.apiUrl}/sts/exchange?identity=${encodeURIComponent(identity)}`, { method: "POST", headers: { authorization: `Bearer ${bearer}` } });
  const body = (await res.json()) as { token?: string; code?: number; message?: string };
  return { status: res.status, body, ms: performance.now() - started };
}

/**
 * A JWT naming `iss` and `sub` with an RS256 header and a made-up signature: the caller-controlled,
 * unverified data an exchange sees first (it gets as far as fetching the issuer's keys).
 */
export function unverifiedToken(iss: string, sub = "someone"): string {
  const now = Math.floor(Date.now() / 1000);
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
  return `${part({ alg: "RS256", typ: "JWT", kid: "k" })}.${part({ iss, sub, iat: now, exp: now + 300 })}.${Buffer.from("not a signature").toString("base64url")}`;
}
