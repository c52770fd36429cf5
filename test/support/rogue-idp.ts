import http from "node:http";
import type { AddressInfo } from "node:net";
import { createHash, randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import { exportJWK, generateKeyPair, SignJWT, UnsecuredJWT, type CryptoKey, type JWK, type JWTPayload } from "jose";

/**
 * A hand-rolled OpenID Provider on loopback that misbehaves on demand, for the relying party's
 * security tests. Its authorization endpoint shows no form: it redirects straight back to
 * `redirect_uri` with a code and the request's `state`. Its token endpoint exchanges a code
 * once (a replay is `400 invalid_grant`), checks the PKCE S256 verifier against the stored
 * challenge (unless `mode` is "ignore-pkce") and `redirect_uri`, and answers
 * `{access_token, token_type: "Bearer", id_token, expires_in}`, the ID token minted as `mode`
 * says:
 *
 * - "good": RS256 by the published key, `iss`, `aud` = client_id, the request's `nonce`, now;
 * - "wrong-audience": `aud` another client; "wrong-issuer": `iss` another issuer;
 * - "expired": `exp` an hour ago; "not-yet-valid": `iat` and `nbf` an hour ahead;
 * - "alg-none": unsigned (`alg: "none"`); "unknown-key": signed by a key not in the JWKS;
 * - "wrong-nonce": another nonce; "ignore-pkce": a good token, with no verifier check.
 *
 * Client authentication may be client_secret_basic, client_secret_post or none; a client
 * registered with `addClient` and a secret must present it (else `401 invalid_client`), any
 * other client is accepted as it is.
 */
export type RogueMode = "good" | "wrong-audience" | "expired" | "not-yet-valid" | "alg-none" | "wrong-nonce" | "wrong-issuer" | "unknown-key" | "ignore-pkce";

export interface RogueClaims {
  sub?: string;
  email?: string;
  email_verified?: boolean;
  name?: string;
  groups?: string[];
}

export interface RogueIdp {
  /** The issuer identifier, `http://127.0.0.1:PORT` (no trailing slash). */
  issuer: string;
  /** How the next token responses misbehave; "good" at the start. */
  mode: RogueMode;
  /** The query parameters of each authorization request, in order. */
  authorizationRequests: Array<Record<string, string>>;
  /** The form parameters of each token request, in order. */
  tokenRequests: Array<Record<string, string>>;
  /** The claims of the ID tokens minted from now on (`sub` defaults to "rogue-user"). */
  setClaims(claims: RogueClaims): void;
  /** Registers a client whose secret, if any, the token endpoint then requires. */
  addClient(client: { client_id: string; client_secret?: string }): void;
  close(): Promise<void>;
}

interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

interface IssuedCode {
  clientId: string;
  redirectUri: string;
  codeChallenge?: string;
  codeChallengeMethod?: string;
  nonce?: string;
  used: boolean;
}

const ALGORITHM = "RS256";

async function newKey(): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(ALGORITHM, { extractable: true });
  const kid = randomUUID();
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: ALGORITHM, use: "sig" } };
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

async function readBody(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function json(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store", ...headers }).end(JSON.stringify(body));
}

function oauthError(res: http.ServerResponse, status: number, error: string, description: string): void {
  json(res, status, { error, error_description: description }, status === 401 ? { "www-authenticate": 'Basic realm="rogue"' } : {});
}

/** client_secret_basic: both parts are form-urlencoded before base64 (RFC 6749 §2.3.1). */
function basicCredentials(header: string | undefined): { id: string; secret: string } | undefined {
  const match = /^Basic\s+(.+)$/i.exec(header ?? "");
  if (!match) return undefined;
  const decoded = Buffer.from(match[1], "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon < 0) return undefined;
  const unescape = (s: string) => decodeURIComponent(s.replace(/\+/g, " "));
  return { id: unescape(decoded.slice(0, colon)), secret: unescape(decoded.slice(colon + 1)) };
}

export async function startRogueIdp(): Promise<RogueIdp> {
  const key = await newKey();
  const strangerKey = await newKey();
  const codes = new Map<string, IssuedCode>();
  const clients = new Map<string, string | undefined>();
  let claims: RogueClaims = { sub: "rogue-user" };
  let issuer = "";

  const idp: RogueIdp = {
    issuer: "",
    mode: "good",
    authorizationRequests: [],
    tokenRequests: [],
    setClaims(next) {
      claims = { sub: "rogue-user", ...next };
    },
    addClient({ client_id, client_secret }) {
      clients.set(client_id, client_secret);
    },
    close: async () => undefined,
  };

  async function mintIdToken(code: IssuedCode): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    const payload: JWTPayload = { ...claims, iss: issuer, aud: code.clientId, iat: now, exp: now + 600 };
    if (code.nonce !== undefined) payload.nonce = code.nonce;
    switch (idp.mode) {
      case "wrong-audience":
        payload.aud = "some-other-client";
        break;
      case "wrong-issuer":
        payload.iss = "http://rogue.invalid";
        break;
      case "expired":
        payload.iat = now - 7200;
        payload.exp = now - 3600;
        break;
      case "not-yet-valid":
        payload.iat = now + 3600;
        payload.nbf = now + 3600;
        payload.exp = now + 7200;
        break;
      case "wrong-nonce":
        payload.nonce = randomBytes(16).toString("base64url");
        break;
      case "alg-none":
        return new UnsecuredJWT(payload).encode();
      default:
        break;
    }
    const signer = idp.mode === "unknown-key" ? strangerKey : key;
    return new SignJWT(payload).setProtectedHeader({ alg: ALGORITHM, kid: signer.kid, typ: "JWT" }).sign(signer.privateKey);
  }

  function authorize(url: URL, res: http.ServerResponse): void {
    const params = Object.fromEntries(url.searchParams);
    idp.authorizationRequests.push(params);
    const redirectUri = params.redirect_uri;
    if (!redirectUri || !params.client_id) {
      res.writeHead(400, { "content-type": "text/plain" }).end("client_id and redirect_uri are required");
      return;
    }
    const target = new URL(redirectUri);
    if (params.response_type !== "code") {
      target.searchParams.set("error", "unsupported_response_type");
    } else {
      const code = randomBytes(24).toString("base64url");
      codes.set(code, {
        clientId: params.client_id,
        redirectUri,
        codeChallenge: params.code_challenge,
        codeChallengeMethod: params.code_challenge_method,
        nonce: params.nonce,
        used: false,
      });
      target.searchParams.set("code", code);
    }
    if (params.state !== undefined) target.searchParams.set("state", params.state);
    res.writeHead(302, { location: target.href }).end();
  }

  async function token(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const form = new URLSearchParams(await readBody(req));
    const params = Object.fromEntries(form);
    idp.tokenRequests.push(params);
    if (params.grant_type !== "authorization_code") return oauthError(res, 400, "unsupported_grant_type", "only authorization_code");

    const basic = basicCredentials(req.headers.authorization);
    const clientId = basic?.id ?? params.client_id;
    const secret = basic?.secret ?? params.client_secret;
    if (!clientId) return oauthError(res, 401, "invalid_client", "no client authentication");
    const registered = clients.get(clientId);
    if (registered !== undefined && (secret === undefined || !sameText(secret, registered))) return oauthError(res, 401, "invalid_client", "client authentication failed");

    const issued = params.code === undefined ? undefined : codes.get(params.code);
    if (!issued) return oauthError(res, 400, "invalid_grant", "unknown code");
    if (issued.used) return oauthError(res, 400, "invalid_grant", "the code was already used");
    issued.used = true;
    if (issued.clientId !== clientId) return oauthError(res, 400, "invalid_grant", "the code was issued to another client");
    if (issued.redirectUri !== params.redirect_uri) return oauthError(res, 400, "invalid_grant", "redirect_uri does not match");
    if (idp.mode !== "ignore-pkce") {
      if (issued.codeChallenge === undefined || issued.codeChallengeMethod !== "S256") return oauthError(res, 400, "invalid_grant", "PKCE S256 is required");
      const verifier = params.code_verifier;
      if (!verifier || !sameText(createHash("sha256").update(verifier).digest("base64url"), issued.codeChallenge)) return oauthError(res, 400, "invalid_grant", "PKCE verification failed");
    }
    json(res, 200, { access_token: randomBytes(24).toString("base64url"), token_type: "Bearer", id_token: await mintIdToken(issued), expires_in: 600 });
  }

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", issuer);
    const answer = async () => {
      if (url.pathname === "/.well-known/openid-configuration") {
        return json(res, 200, {
          issuer,
          authorization_endpoint: `${issuer}/authorize`,
          token_endpoint: `${issuer}/token`,
          jwks_uri: `${issuer}/jwks`,
          response_types_supported: ["code"],
          subject_types_supported: ["public"],
          id_token_signing_alg_values_supported: [ALGORITHM],
          code_challenge_methods_supported: ["S256"],
          grant_types_supported: ["authorization_code"],
          token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post", "none"],
          scopes_supported: ["openid", "email", "profile", "groups"],
        });
      }
      if (url.pathname === "/jwks") return json(res, 200, { keys: [key.publicJwk] });
      if (url.pathname === "/authorize" && req.method === "GET") return authorize(url, res);
      if (url.pathname === "/token" && req.method === "POST") return token(req, res);
      res.writeHead(404).end();
    };
    answer().catch((error: unknown) => {
      if (!res.headersSent) oauthError(res, 500, "server_error", error instanceof Error ? error.message : String(error));
      else res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  idp.issuer = issuer;
  idp.close = () =>
    new Promise<void>((resolve, reject) => {
      server.closeAllConnections();
      server.close((e) => (e ? reject(e) : resolve()));
    });
  return idp;
}
