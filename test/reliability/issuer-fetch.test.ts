import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { startOidcIssuer, type OidcIssuer } from "../support/oidc-issuer.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { newChildUid } from "../../src/aip/uidp.js";
import { insertIdentity } from "../../src/domains/iam/store/identities.js";
import { violatedFields } from "../support/wires.js";
import { createIdentity, exchange, identityUid, unverifiedToken } from "./exchange-helpers.js";

/**
 * The token exchange fetches the discovery document and JWKS of the issuer an identity names: by
 * default only over https from public addresses, never following a redirect, within one deadline.
 * Every target here is on loopback; refused targets must see no connection at all.
 */

const SUBJECT = "repo:acme/app:ref:refs/heads/main";
let issuer: OidcIssuer;
/** Servers close together at the end (a close waits for the clients' idle keep-alive connections). */
const closing: Promise<void>[] = [];

before(async () => {
  issuer = await startOidcIssuer();
});
after(async () => {
  await Promise.all(closing);
  await issuer.close();
});

/** Exchanges a real token of the loopback issuer, under the identity's `issuer` spelled `issuerUrl`. */
async function exchangeVia(server: TestServer, issuerUrl: string) {
  const uid = await identityUid(server, { name: "ci", claimMatch: { issuer: issuerUrl, subject: SUBJECT } });
  return exchange(server, uid, await issuer.issue({ iss: issuerUrl, sub: SUBJECT }));
}

function refusedWithoutContact(answer: { status: number }, connectionsBefore: number) {
  assert.equal(answer.status, 401);
  assert.equal(issuer.connections(), connectionsBefore, "the issuer saw no connection");
}

describe("by default (https issuers on public addresses only)", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => closing.push(server.close()));

  test("an http issuer is refused when the identity is written, and at the exchange before any connection", async () => {
    const refused = await createIdentity(server, { name: "ci", claimMatch: { issuer: issuer.url, subject: SUBJECT } });
    assert.equal(refused.code, 3);
    assert.deepEqual(violatedFields(refused), ["identity.claim_match.issuer"]);
    // One stored under another setting (the operator allowed http, then stopped).
    const uid = newChildUid(server.org.uid);
    const now = Date.now();
    const claimMatch = JSON.stringify({ issuer: issuer.url, subject: SUBJECT });
    await insertIdentity(server.store.db, { uid, group_uid: server.org.uid, name: "ci", description: "", claim_match: claimMatch, static_keys: "", last_seen_time: now, create_time: now, update_time: now });
    const seen = issuer.connections();
    refusedWithoutContact(await exchange(server, uid, await issuer.issue({ iss: issuer.url, sub: SUBJECT })), seen);
    assert.ok(server.logs.some((l) => l.includes("not an https URL")), "the log says why");
  });

  test("an https issuer on a loopback literal is refused before any connection (v4, v6, IPv4-mapped v6)", async () => {
    const port = new URL(issuer.url).port;
    for (const host of ["127.0.0.1", "[::1]", "[::ffff:127.0.0.1]"]) {
      const seen = issuer.connections();
      refusedWithoutContact(await exchangeVia(server, `https://${host}:${port}`), seen);
    }
    assert.ok(server.logs.some((l) => l.includes("not a public address")));
  });
});

describe("with http allowed but not private addresses", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ upstreamIssuers: { allowHttp: true } });
  });
  after(() => closing.push(server.close()));

  test("an identity may name an http issuer", async () => {
    const made = await createIdentity(server, { name: "ci", claimMatch: { issuer: "http://issuer.example", subject: SUBJECT } });
    assert.equal(made.code, 0, made.message);
  });

  test("a host name is judged by the address it resolves to: localhost is refused before any connection", async () => {
    const seen = issuer.connections();
    refusedWithoutContact(await exchangeVia(server, `http://localhost:${new URL(issuer.url).port}`), seen);
    assert.ok(server.logs.some((l) => /localhost resolves to (127\.0\.0\.1|::1), which is not a public address/.test(l)), server.logs.join("\n"));
  });
});

describe("with both allowed (a closed network; the operator's choice)", () => {
  let server: TestServer;
  let redirector: http.Server;
  let tarpit: http.Server;
  let redirectorUrl = "";
  let tarpitUrl = "";
  before(async () => {
    server = await startTestServer({ upstreamIssuers: { allowHttp: true, allowPrivateAddresses: true }, limits: { upstreamFetchTimeoutMs: 300 } });
    // Answers discovery with a redirect to the real issuer's discovery document.
    redirector = http.createServer((req, res) => res.writeHead(302, { location: `${issuer.url}${req.url}` }).end());
    // Sends headers, then one byte every 100 ms, forever.
    tarpit = http.createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      const timer = setInterval(() => res.write(" "), 100);
      res.on("close", () => clearInterval(timer));
    });
    const listen = (s: http.Server) => new Promise<string>((resolve) => s.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(s.address() as AddressInfo).port}`)));
    redirectorUrl = await listen(redirector);
    tarpitUrl = await listen(tarpit);
  });
  after(async () => {
    for (const s of [redirector, tarpit]) {
      s.closeAllConnections();
      await new Promise((resolve) => s.close(resolve));
    }
    closing.push(server.close());
  });

  test("the loopback issuer works", async () => {
    const answer = await exchangeVia(server, issuer.url);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
  });

  test("a redirect is not followed", async () => {
    const before = { ...issuer.requests };
    const uid = await identityUid(server, { name: "redirected", claimMatch: { issuer: redirectorUrl, subject: SUBJECT } });
    const answer = await exchange(server, uid, unverifiedToken(redirectorUrl, SUBJECT));
    assert.equal(answer.status, 401);
    assert.deepEqual(issuer.requests, before, "the redirect's target was not asked");
    assert.ok(server.logs.some((l) => l.includes("HTTP 302")));
  });

  test("an issuer that dribbles its answer is cut off at the deadline; the server answers meanwhile", async () => {
    const uid = await identityUid(server, { name: "tarpitted", claimMatch: { issuer: tarpitUrl, subject: SUBJECT } });
    const slow = exchange(server, uid, unverifiedToken(tarpitUrl, SUBJECT));
    const ping = await fetch(`${server.apiUrl}/ping/v2/ping`);
    assert.equal(ping.status, 200);
    const answer = await slow;
    assert.equal(answer.status, 401);
    assert.ok(answer.ms < 2_000, `answered after ${Math.round(answer.ms)} ms with a 300 ms deadline`);
    assert.ok(server.logs.some((l) => l.includes("did not answer within 300 ms")));
  });
});
