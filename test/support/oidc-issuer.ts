import http from "node:http";
import type { AddressInfo } from "node:net";
import { randomUUID } from "node:crypto";
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from "jose";

/**
 * A real second OIDC issuer on loopback for exchange tests: publishes
 * `/.well-known/openid-configuration` and a JWKS and signs tokens with a key it generates.
 * It counts the requests it serves.
 */
export interface OidcIssuer {
  /** The issuer URL (`iss`), e.g. http://127.0.0.1:PORT. */
  url: string;
  /** Requests served, by kind. */
  requests: { discovery: number; jwks: number };
  /** The `traceparent` header of each request served, in order. */
  traceparents: Array<string | undefined>;
  /** TCP connections accepted. */
  connections(): number;
  /** Signs a token: `iss` is this issuer, `iat` now, `exp` now + `expiresIn` seconds (default 300) unless the claims set them. */
  issue(claims: JWTPayload, options?: { expiresIn?: number }): Promise<string>;
  /** Generates a new signing key and publishes it (with the old ones). */
  rotate(): Promise<void>;
  close(): Promise<void>;
}

interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

const ALGORITHM = "RS256";

async function newKey(): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(ALGORITHM, { extractable: true });
  const kid = randomUUID();
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: ALGORITHM, use: "sig" } };
}

export async function startOidcIssuer(): Promise<OidcIssuer> {
  const keys: SigningKey[] = [await newKey()];
  const requests = { discovery: 0, jwks: 0 };
  let url = "";
  const traceparents: Array<string | undefined> = [];
  const server = http.createServer((req, res) => {
    const path = req.url?.split("?")[0];
    const traceparent = req.headers.traceparent;
    traceparents.push(typeof traceparent === "string" ? traceparent : undefined);
    let body: unknown;
    if (path === "/.well-known/openid-configuration") {
      requests.discovery++;
      body = { issuer: url, jwks_uri: `${url}/keys`, response_types_supported: ["id_token"], subject_types_supported: ["public"], id_token_signing_alg_values_supported: [ALGORITHM] };
    } else if (path === "/keys") {
      requests.jwks++;
      body = { keys: keys.map((k) => k.publicJwk) };
    } else {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
  });
  let connections = 0;
  server.on("connection", () => connections++);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    requests,
    traceparents,
    connections: () => connections,
    async issue(claims, { expiresIn = 300 } = {}) {
      const key = keys[keys.length - 1];
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({ iss: url, iat: now, exp: now + expiresIn, ...claims })
        .setProtectedHeader({ alg: ALGORITHM, kid: key.kid, typ: "JWT" })
        .sign(key.privateKey);
    },
    async rotate() {
      keys.push(await newKey());
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((e) => (e ? reject(e) : resolve()));
      }),
  };
}
