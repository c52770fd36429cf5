import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  ExchangeRefused,
  isExchangeable,
  issuerMatches,
  matchesWhole,
  mismatch,
  parseClaimMatch,
  parseStaticKeys,
  type ClaimMatch,
} from "../../src/transport/auth/exchange.js";
import { discoveryUrl } from "../../src/transport/auth/upstream-keys.js";

const ISS = "https://token.actions.githubusercontent.com";
const base: ClaimMatch = { issuer: ISS, subject: "repo:acme/app:ref:refs/heads/main" };
const token = { iss: ISS, sub: "repo:acme/app:ref:refs/heads/main", aud: "https://api.example", exp: 1 };

describe("matchesWhole", () => {
  test("anchors the pattern at both ends", () => {
    assert.equal(matchesWhole("repo:acme/.*:ref:refs/heads/main", "repo:acme/app:ref:refs/heads/main"), true);
    assert.equal(matchesWhole("repo:acme/.*:ref:refs/heads/main", "repo:acme/app:ref:refs/heads/main-evil"), false);
    assert.equal(matchesWhole("repo:acme/.*:ref:refs/heads/main", "xrepo:acme/app:ref:refs/heads/main"), false);
  });
  test("alternations stay anchored", () => {
    assert.equal(matchesWhole("a|b", "a"), true);
    assert.equal(matchesWhole("a|b", "ab"), false);
    assert.equal(matchesWhole("a|b", "xb"), false);
  });
  test("an invalid or group-breaking pattern matches nothing", () => {
    assert.equal(matchesWhole("(", "("), false);
    assert.equal(matchesWhole("a)|(b", "zzzb"), false);
    assert.equal(matchesWhole("a)|(b", "a"), false);
  });
});

describe("parseClaimMatch", () => {
  test('"" is absent; empty strings and empty maps are unset', () => {
    assert.equal(parseClaimMatch(""), undefined);
    assert.deepEqual(parseClaimMatch(JSON.stringify({ issuer: ISS, subject: "", claims: {} })), { issuer: ISS });
  });
  test("malformed JSON or wrong types are refused", () => {
    assert.throws(() => parseClaimMatch("{"), ExchangeRefused);
    assert.throws(() => parseClaimMatch("[]"), ExchangeRefused);
    assert.throws(() => parseClaimMatch(JSON.stringify({ issuer: 3 })), ExchangeRefused);
    assert.throws(() => parseClaimMatch(JSON.stringify({ claims: { a: 1 } })), ExchangeRefused);
  });
});

describe("parseStaticKeys", () => {
  test("needs issuer, subject and a JWKS", () => {
    assert.equal(parseStaticKeys(""), undefined);
    assert.throws(() => parseStaticKeys(JSON.stringify({ issuer: ISS, issuerKeys: { keys: [] } })), ExchangeRefused);
    assert.throws(() => parseStaticKeys(JSON.stringify({ issuer: ISS, subject: "s", issuerKeys: {} })), ExchangeRefused);
    assert.throws(() => parseStaticKeys(JSON.stringify({ issuer: ISS, subject: "s", issuerKeys: { keys: [] }, expirationTime: "soon" })), ExchangeRefused);
    assert.deepEqual(parseStaticKeys(JSON.stringify({ issuer: ISS, subject: "s", issuerKeys: { keys: [] }, expirationTime: 5 })), {
      issuer: ISS,
      subject: "s",
      issuerKeys: { keys: [] },
      expirationTime: 5,
    });
  });
});

describe("exchangeable identities", () => {
  test("need an issuer and a subject, exact or pattern", () => {
    assert.equal(isExchangeable({ issuer: ISS }), false);
    assert.equal(isExchangeable({ subject: "x" }), false);
    assert.equal(isExchangeable({ issuerPattern: ".*", subjectPattern: ".*" }), true);
    assert.match(mismatch({ issuer: ISS }, token)!, /needs an issuer and a subject/);
  });
  test("issuer: exact, pattern, or both", () => {
    assert.equal(issuerMatches({ issuer: ISS }, ISS), true);
    assert.equal(issuerMatches({ issuer: ISS }, `${ISS}/`), false);
    assert.equal(issuerMatches({ issuerPattern: "https://[a-z]+\\.example" }, "https://a.example"), true);
    assert.equal(issuerMatches({ issuerPattern: "https://[a-z]+\\.example" }, "https://a.example.evil"), false);
    assert.equal(issuerMatches({}, ISS), false);
  });
});

describe("mismatch", () => {
  test("exact issuer and subject", () => {
    assert.equal(mismatch(base, token), undefined);
    assert.match(mismatch(base, { ...token, sub: "repo:acme/app:ref:refs/heads/dev" })!, /subject/);
    assert.match(mismatch(base, { ...token, iss: "https://evil.example" })!, /issuer/);
    assert.match(mismatch(base, { ...token, sub: undefined })!, /no sub/);
  });
  test("subject pattern", () => {
    const m = { issuer: ISS, subjectPattern: "repo:acme/.*:ref:refs/heads/main" };
    assert.equal(mismatch(m, token), undefined);
    assert.notEqual(mismatch(m, { ...token, sub: "repo:acme/app:ref:refs/heads/main2" }), undefined);
  });
  test("audience: string or array contains it; pattern matches one element", () => {
    assert.equal(mismatch({ ...base, audience: "https://api.example" }, token), undefined);
    assert.equal(mismatch({ ...base, audience: "https://api.example" }, { ...token, aud: ["x", "https://api.example"] }), undefined);
    assert.notEqual(mismatch({ ...base, audience: "https://api.example" }, { ...token, aud: ["x"] }), undefined);
    assert.notEqual(mismatch({ ...base, audience: "https://api.example" }, { ...token, aud: undefined }), undefined);
    assert.equal(mismatch({ ...base, audiencePattern: "https://.*\\.example" }, { ...token, aud: ["x", "https://api.example"] }), undefined);
    assert.notEqual(mismatch({ ...base, audiencePattern: "https://.*\\.example" }, { ...token, aud: "https://api.example.org" }), undefined);
  });
  test("every listed claim must match; numbers and booleans compare by their JSON text", () => {
    const m = { ...base, claims: { repository_owner: "acme", run_attempt: "1", ephemeral: "true" } };
    const claims = { ...token, repository_owner: "acme", run_attempt: 1, ephemeral: true };
    assert.equal(mismatch(m, claims), undefined);
    assert.match(mismatch(m, { ...claims, repository_owner: "evil" })!, /repository_owner/);
    assert.match(mismatch(m, { ...claims, run_attempt: undefined })!, /run_attempt/);
    assert.match(mismatch(m, { ...claims, repository_owner: { name: "acme" } })!, /repository_owner/);
  });
  test("claim patterns match the whole value", () => {
    const m = { ...base, claimPatterns: { ref: "refs/heads/(main|release-.*)" } };
    assert.equal(mismatch(m, { ...token, ref: "refs/heads/release-1" }), undefined);
    assert.equal(mismatch(m, { ...token, ref: "refs/heads/main" }), undefined);
    assert.notEqual(mismatch(m, { ...token, ref: "refs/heads/mainline" }), undefined);
    assert.notEqual(mismatch(m, { ...token, ref: "x/refs/heads/main" }), undefined);
  });
});

test("discovery URL drops a trailing slash of the issuer", () => {
  assert.equal(discoveryUrl("https://a.example/"), "https://a.example/.well-known/openid-configuration");
  assert.equal(discoveryUrl("https://a.example/tenant"), "https://a.example/tenant/.well-known/openid-configuration");
});
