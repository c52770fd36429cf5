#!/usr/bin/env node
// A stand-in for a workload's OIDC issuer, to try the token exchange on one machine: makes a key
// pair and prints {issuer, subject, issuerKeys (the public JWKS, as a JSON string), token} where the
// token is signed by that key for `--subject` (default repo:acme/app:ref:refs/heads/main) and lives
// 10 minutes. An identity with `staticKeys` {issuer, subject, issuerKeys} accepts the token at
// /sts/exchange without fetching anything. Usage: node scripts/local-issuer.mjs [--issuer URL] [--subject SUB]
import { parseArgs } from "node:util";
import { exportJWK, generateKeyPair, SignJWT } from "jose";

const { values } = parseArgs({
  options: {
    issuer: { type: "string", default: "https://ci.example.com" },
    subject: { type: "string", default: "repo:acme/app:ref:refs/heads/main" },
  },
});
const { publicKey, privateKey } = await generateKeyPair("ES256");
const jwk = { ...(await exportJWK(publicKey)), kid: "local", alg: "ES256", use: "sig" };
const token = await new SignJWT({})
  .setProtectedHeader({ alg: "ES256", kid: "local" })
  .setIssuer(values.issuer)
  .setSubject(values.subject)
  .setAudience("platform-api")
  .setIssuedAt()
  .setExpirationTime("10m")
  .sign(privateKey);
process.stdout.write(`${JSON.stringify({ issuer: values.issuer, subject: values.subject, issuerKeys: JSON.stringify({ keys: [jwk] }), token })}\n`);
