import http from "node:http";
import type { AddressInfo } from "node:net";
import { generateKeyPairSync, randomUUID } from "node:crypto";
import type { Adapter, AdapterPayload, Provider as ProviderType } from "oidc-provider";
import { walkLoginOverHttp } from "./login-walk.js";

/**
 * A real OpenID Provider on loopback for login tests: oidc-provider (the certified
 * implementation) over plain http at `http://127.0.0.1:PORT`, with its own minimal login form
 * (a username and any password) and automatic consent, so that a headless HTTP client
 * (`loginOverHttp`) and a browser can both complete an authorization code flow.
 *
 * Clients are added at any time (`addClient`); one with no secret is public
 * (`token_endpoint_auth_method: "none"`) and must use PKCE (S256, the only method offered). A
 * client added with `refreshTokens` gets a refresh token with every code it redeems, and a
 * refresh answers an ID token with the account's claims as they are then.
 * The claims of the `openid`, `email`, `profile` and `groups` scopes (sub; email,
 * email_verified; name; groups) are put in the ID token itself, so a relying party has them
 * without calling userinfo.
 */
export interface TestIdp {
  /** The issuer identifier, `http://127.0.0.1:PORT` (no trailing slash). */
  issuer: string;
  /** Registers (or replaces) a client; validated by oidc-provider, so bad metadata throws here. */
  addClient(client: TestIdpClient): Promise<void>;
  /** An account the login form accepts under `login` (with any password); `sub` defaults to `login`. */
  setAccount(login: string, claims?: TestIdpAccount): void;
  /** Deletes the account of `login`: its grants stay, but the provider refuses their refresh (`invalid_grant`). */
  removeAccount(login: string): void;
  /** Refresh tokens the provider accepted (`grant_type=refresh_token` answered 200). */
  readonly refreshes: number;
  /** While true, every request is answered 503 (the provider is down). */
  unavailable: boolean;
  /**
   * Completes an authorization request over plain HTTP as the user `login`: follows
   * `authorizationUrl` (manual redirects, a cookie jar), posts the login form, follows the
   * redirects and returns the first URL off the IdP's origin (the relying party's redirect URI
   * with `code` and `state`, or `error`), without fetching it.
   */
  loginOverHttp(authorizationUrl: string | URL, login: string, password?: string): Promise<URL>;
  /** Errors oidc-provider reported as server errors (for a test's diagnostics). */
  serverErrors: unknown[];
  close(): Promise<void>;
}

export interface TestIdpClient {
  client_id: string;
  /** Absent: a public client (`token_endpoint_auth_method: "none"`, PKCE required). */
  client_secret?: string;
  redirect_uris: string[];
  /** Defaults to client_secret_basic with a secret, none without. */
  token_endpoint_auth_method?: "client_secret_basic" | "client_secret_post" | "none";
  /** Allow the refresh_token grant: each code redeemed also answers a refresh token. */
  refreshTokens?: boolean;
}

export interface TestIdpAccount {
  sub?: string;
  email?: string;
  email_verified?: boolean;
  name?: string;
  groups?: string[];
}

export interface TestIdpOptions {
  /** The loopback port to listen on; default any free one. */
  port?: number;
  /** Lifetime of ID tokens (default 3600). */
  idTokenTtlSeconds?: number;
  /** Lifetime of access tokens (default 3600). */
  accessTokenTtlSeconds?: number;
}

/** Fixed, so that cookies signed by one run's provider stay readable in the same run. */
const COOKIE_KEYS = ["test-idp-cookie-key-1", "test-idp-cookie-key-2"];

/**
 * oidc-provider writes its notices to the console: "Unsupported runtime" on Node 20 when the
 * module is loaded, and "you should change ..." for defaults. The filter drops only those
 * (their text begins "oidc-provider "), and is installed before the module is first imported.
 */
function silenceOidcProviderNotices(): void {
  const marker = Symbol.for("platform-api.test-idp.silenced");
  const holder = console as unknown as Record<symbol, boolean>;
  if (holder[marker]) return;
  holder[marker] = true;
  for (const method of ["warn", "info"] as const) {
    const original = console[method].bind(console);
    console[method] = (...args: unknown[]) => {
      if (typeof args[0] === "string" && args[0].replace(/^\x1b\[[0-9;]*m/, "").startsWith("oidc-provider ")) return;
      original(...args);
    };
  }
}

let providerModule: Promise<typeof import("oidc-provider")> | undefined;
function loadProvider(): Promise<typeof import("oidc-provider")> {
  silenceOidcProviderNotices();
  providerModule ??= import("oidc-provider");
  return providerModule;
}

/** oidc-provider's storage, per provider: a map with expiry, the indexes it needs, and clients read from `clients`. */
function memoryAdapter(clients: Map<string, AdapterPayload>): (model: string) => Adapter {
  const store = new Map<string, { payload: AdapterPayload; expiresAt: number }>();
  const get = (key: string): AdapterPayload | undefined => {
    const entry = store.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= Date.now()) {
      store.delete(key);
      return undefined;
    }
    return entry.payload;
  };
  const set = (key: string, payload: AdapterPayload, expiresIn?: number) => {
    store.set(key, { payload, expiresAt: typeof expiresIn === "number" ? Date.now() + expiresIn * 1000 : Infinity });
  };
  return (model) => {
    const key = (id: string) => `${model}:${id}`;
    return {
      async upsert(id, payload, expiresIn) {
        if (model === "Client") {
          clients.set(id, payload);
          return;
        }
        set(key(id), payload, expiresIn);
        if (model === "Session" && payload.uid) set(`sessionUid:${payload.uid}`, { id }, expiresIn);
        if (payload.userCode) set(`userCode:${payload.userCode}`, { id }, expiresIn);
        if (payload.grantId) {
          const members = (get(`grant:${payload.grantId}`)?.keys as string[] | undefined) ?? [];
          set(`grant:${payload.grantId}`, { keys: [...members, key(id)] });
        }
      },
      async find(id) {
        if (model === "Client") return clients.get(id);
        return get(key(id));
      },
      async findByUid(uid) {
        const id = get(`sessionUid:${uid}`)?.id;
        return typeof id === "string" ? get(key(id)) : undefined;
      },
      async findByUserCode(userCode) {
        const id = get(`userCode:${userCode}`)?.id;
        return typeof id === "string" ? get(key(id)) : undefined;
      },
      async consume(id) {
        const payload = get(key(id));
        if (payload) payload.consumed = Math.floor(Date.now() / 1000);
      },
      async destroy(id) {
        if (model === "Client") clients.delete(id);
        else store.delete(key(id));
      },
      async revokeByGrantId(grantId) {
        for (const member of (get(`grant:${grantId}`)?.keys as string[] | undefined) ?? []) store.delete(member);
        store.delete(`grant:${grantId}`);
      },
    };
  };
}

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function page(title: string, body: string): string {
  return `<!DOCTYPE html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body>${body}</body></html>`;
}

function loginForm(uid: string, clientId: string, error?: string, login = ""): string {
  return page(
    "Sign in to the test IdP",
    `<h1>Sign in</h1><p>to continue to ${escapeHtml(clientId)}</p>` +
      (error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : "") +
      `<form method="post" action="/interaction/${escapeHtml(uid)}/login" autocomplete="off">` +
      `<label>Username <input name="login" id="login" value="${escapeHtml(login)}" required autofocus></label>` +
      `<label>Password <input name="password" id="password" type="password"></label>` +
      `<button type="submit" id="submit">Sign in</button></form>`,
  );
}

async function readForm(req: http.IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}

export async function startTestIdp(options: TestIdpOptions = {}): Promise<TestIdp> {
  const { Provider } = await loadProvider();
  const { idTokenTtlSeconds = 3600, accessTokenTtlSeconds = 3600 } = options;
  const clients = new Map<string, AdapterPayload>();
  const accounts = new Map<string, TestIdpAccount & { sub: string }>();
  const accountsBySub = new Map<string, TestIdpAccount & { sub: string }>();
  const serverErrors: unknown[] = [];

  const server = http.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", resolve);
  });
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const signingKey = { ...generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ format: "jwk" }), kid: randomUUID(), alg: "RS256", use: "sig" };

  const provider: ProviderType = new Provider(issuer, {
    adapter: memoryAdapter(clients),
    jwks: { keys: [signingKey] },
    cookies: { keys: COOKIE_KEYS },
    features: { devInteractions: { enabled: false } },
    claims: {
      openid: ["sub"],
      email: ["email", "email_verified"],
      profile: ["name"],
      groups: ["groups"],
    },
    conformIdTokenClaims: false,
    // A refresh token for every code of a client allowed the grant (no `offline_access` consent asked).
    issueRefreshToken: async (_ctx: unknown, client: { grantTypeAllowed(type: string): boolean }) => client.grantTypeAllowed("refresh_token"),
    clientDefaults: { grant_types: ["authorization_code"], response_types: ["code"], id_token_signed_response_alg: "RS256", token_endpoint_auth_method: "client_secret_basic" },
    ttl: {
      AccessToken: accessTokenTtlSeconds,
      AuthorizationCode: 60,
      IdToken: idTokenTtlSeconds,
      Interaction: 600,
      Session: 3600,
      Grant: 3600,
      RefreshToken: 3600,
      ClientCredentials: 600,
      DeviceCode: 600,
      BackchannelAuthenticationRequest: 600,
      PreAuthorizedCode: 600,
    },
    async findAccount(_ctx, sub) {
      const account = accountsBySub.get(sub);
      if (!account) return undefined;
      return {
        accountId: sub,
        claims: () => {
          const claims: Record<string, unknown> = { sub };
          for (const name of ["email", "email_verified", "name", "groups"] as const) if (account[name] !== undefined) claims[name] = account[name];
          return claims;
        },
      };
    },
    async renderError(ctx: { type: string; body: string }, out: Record<string, string>) {
      ctx.type = "html";
      ctx.body = page("Error", `<h1>Error</h1>${Object.entries(out).map(([k, v]) => `<p><strong>${escapeHtml(k)}</strong>: ${escapeHtml(String(v))}</p>`).join("")}`);
    },
  });
  provider.on("server_error", (_ctx, error) => serverErrors.push(error));
  let refreshes = 0;
  provider.on("grant.success", (ctx) => {
    if ((ctx as { oidc?: { params?: { grant_type?: unknown } } }).oidc?.params?.grant_type === "refresh_token") refreshes++;
  });
  let unavailable = false;
  const callback = provider.callback();

  /** The login and consent prompts: GET shows the form (or consents), POST …/login signs in. */
  async function interaction(req: http.IncomingMessage, res: http.ServerResponse, path: string): Promise<void> {
    const details = await provider.interactionDetails(req, res);
    const { uid, prompt, params, session } = details;
    if (req.method === "POST" && path.endsWith("/login")) {
      const form = await readForm(req);
      const login = form.get("login") ?? "";
      const account = accounts.get(login);
      if (!account) {
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(loginForm(uid, params.client_id, "Unknown user", login));
        return;
      }
      await provider.interactionFinished(req, res, { login: { accountId: account.sub } }, { mergeWithLastSubmission: false });
      return;
    }
    if (prompt.name === "login") {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(loginForm(uid, params.client_id));
      return;
    }
    if (prompt.name === "consent") {
      // Consent is automatic: everything requested is granted.
      const existing = details.grantId ? await provider.Grant.find(details.grantId) : undefined;
      const grant = existing ?? new provider.Grant({ accountId: session!.accountId!, clientId: params.client_id });
      const { missingOIDCScope, missingOIDCClaims, missingResourceScopes } = prompt.details;
      if (missingOIDCScope) grant.addOIDCScope(missingOIDCScope.join(" "));
      if (missingOIDCClaims) grant.addOIDCClaims(missingOIDCClaims);
      for (const [indicator, scopes] of Object.entries(missingResourceScopes ?? {})) grant.addResourceScope(indicator, scopes.join(" "));
      const grantId = await grant.save();
      await provider.interactionFinished(req, res, existing ? {} : { consent: { grantId } }, { mergeWithLastSubmission: true });
      return;
    }
    res.writeHead(400, { "content-type": "text/plain" }).end(`unsupported prompt ${prompt.name}`);
  }

  server.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (unavailable) {
      res.writeHead(503, { "content-type": "text/plain" }).end("down");
      return;
    }
    const path = (req.url ?? "/").split("?")[0];
    if (!path.startsWith("/interaction/")) {
      callback(req, res);
      return;
    }
    interaction(req, res, path).catch((error: unknown) => {
      serverErrors.push(error);
      if (!res.headersSent) res.writeHead(400, { "content-type": "text/plain" });
      res.end(`interaction failed: ${error instanceof Error ? error.message : String(error)}`);
    });
  });

  const loginOverHttp = async (authorizationUrl: string | URL, login: string, password = login): Promise<URL> =>
    (await walkLoginOverHttp(authorizationUrl, login, { password, stopOffOrigin: new URL(issuer).origin })).url;

  return {
    issuer,
    serverErrors,
    async addClient(client) {
      const metadata: AdapterPayload = {
        client_id: client.client_id,
        redirect_uris: client.redirect_uris,
        grant_types: client.refreshTokens ? ["authorization_code", "refresh_token"] : ["authorization_code"],
        response_types: ["code"],
        token_endpoint_auth_method: client.token_endpoint_auth_method ?? (client.client_secret === undefined ? "none" : "client_secret_basic"),
        ...(client.client_secret === undefined ? {} : { client_secret: client.client_secret }),
      };
      await provider.Client.validate(metadata);
      clients.set(client.client_id, metadata);
    },
    setAccount(login, claims = {}) {
      const previous = accounts.get(login);
      if (previous) accountsBySub.delete(previous.sub);
      const account = { ...claims, sub: claims.sub ?? login };
      accounts.set(login, account);
      accountsBySub.set(account.sub, account);
    },
    removeAccount(login) {
      const account = accounts.get(login);
      if (!account) return;
      accounts.delete(login);
      accountsBySub.delete(account.sub);
    },
    get refreshes() {
      return refreshes;
    },
    get unavailable() {
      return unavailable;
    },
    set unavailable(value: boolean) {
      unavailable = value;
    },
    loginOverHttp,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((e) => (e ? reject(e) : resolve()));
      }),
  };
}
