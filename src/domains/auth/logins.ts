import { createHash, randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import type { PersonClaim } from "../../access/principal.js";
import { inTransaction } from "../../store/transaction.js";
import type { Database, Db } from "../kit/schema.js";
import type { SignedIn } from "./refresh.js";
import { advanceLogin, insertLogin, liveLoginBy, pendingDeviceLoginCount, pruneLogins, setLoginPoll, type LoginRow } from "./store/logins.js";
import { newSecret, newUserCode, normalizeUserCode, secretHash } from "./store/secrets.js";

/**
 * Logins in progress (docs/authorization.md, "People sign in"). A browser login goes
 * redirected → signed_in (a one-time code for the client) → redeemed; a device login goes
 * started → redirected → signed_in → redeemed (the terminal's poll). A failed sign-in ends in
 * denied. Each state, code and device code is used once: every step is a conditional move from
 * the status it expects.
 */

/** How long a person has to sign in at the provider, ms. */
export const LOGIN_TTL_MS = 10 * 60_000;
/** How long the one-time code of a browser login may wait for the client, ms (RFC 6749 4.1.2: 10 minutes at most). */
export const CODE_TTL_MS = 60_000;
/** RFC 8628 3.2: the least interval between a device's polls, seconds; each `slow_down` adds 5. */
export const DEVICE_POLL_INTERVAL_S = 5;

/** What the request to the provider carries and the callback checks. */
export interface UpstreamRequest {
  state: string;
  nonce: string;
  /** Our PKCE verifier for the provider. */
  verifier: string;
}

const blank = {
  state_hash: "",
  nonce: "",
  upstream_verifier: "",
  redirect_uri: "",
  client_state: "",
  code_challenge: "",
  code_hash: "",
  device_code_hash: "",
  user_code: "",
  poll_interval: 0,
  last_poll_time: 0,
  identity_uid: "",
  person: "",
  upstream_refresh_token: "",
  error: "",
  client_address: "",
};

const upstreamColumns = (upstream: UpstreamRequest) => ({ state_hash: secretHash(upstream.state), nonce: upstream.nonce, upstream_verifier: upstream.verifier });

/** Records a browser login about to be redirected to the provider. */
export async function startBrowserLogin(
  db: Db,
  login: { providerUid: string; redirectUri: string; clientState: string; codeChallenge: string; upstream: UpstreamRequest },
  time: number,
): Promise<void> {
  await pruneLogins(db, time);
  await insertLogin(db, {
    ...blank,
    uid: randomUUID(),
    kind: "browser",
    provider_uid: login.providerUid,
    status: "redirected",
    ...upstreamColumns(login.upstream),
    redirect_uri: login.redirectUri,
    client_state: login.clientState,
    code_challenge: login.codeChallenge,
    create_time: time,
    expire_time: time + LOGIN_TTL_MS,
  });
}

/** RFC 8628 3.2: a device authorization. `expiresIn` and `interval` in seconds. */
export interface DeviceAuthorization {
  deviceCode: string;
  userCode: string;
  expiresIn: number;
  interval: number;
}

/** The most device logins pending at once (started, neither confirmed nor expired): per client address, and in all. */
export interface PendingDeviceLimits {
  perClient: number;
  inAll: number;
}

/** A device login refused for too many pending: whose (`client`: the address's own, `all`), and in how many seconds one expires. */
export interface DeviceLoginRefused {
  tooMany: "client" | "all";
  retryAfterSeconds: number;
}

/**
 * Starts device logins (RFC 8628 3.1, 3.2) for unauthenticated clients, within `limits`: a client
 * address with `perClient` pending, or the server with `inAll`, is refused (nothing written) until
 * one expires, LOGIN_TTL_MS after its start. Starts run one at a time in this process, so counting
 * and inserting do not interleave here (each other replica may add one more at once). Expired
 * logins are deleted by the start that follows them.
 */
export function createDeviceLoginStarter(db: Db, limits: PendingDeviceLimits) {
  let turn: Promise<unknown> = Promise.resolve();

  async function start(providerUid: string, clientAddress: string, time: number): Promise<DeviceAuthorization | DeviceLoginRefused> {
    const own = await pendingDeviceLoginCount(db, time, clientAddress);
    if (own.count >= limits.perClient) return refused("client", own.firstExpiry, time);
    const all = await pendingDeviceLoginCount(db, time);
    if (all.count >= limits.inAll) return refused("all", all.firstExpiry, time);
    await pruneLogins(db, time);
    const deviceCode = newSecret();
    const userCode = newUserCode();
    await insertLogin(db, {
      ...blank,
      uid: randomUUID(),
      kind: "device",
      provider_uid: providerUid,
      status: "started",
      device_code_hash: secretHash(deviceCode),
      user_code: userCode,
      poll_interval: DEVICE_POLL_INTERVAL_S,
      client_address: clientAddress,
      create_time: time,
      expire_time: time + LOGIN_TTL_MS,
    });
    return { deviceCode, userCode, expiresIn: LOGIN_TTL_MS / 1000, interval: DEVICE_POLL_INTERVAL_S };
  }

  return {
    /** A device authorization for the client at `clientAddress`, or why not. */
    start(providerUid: string, clientAddress: string, time: number): Promise<DeviceAuthorization | DeviceLoginRefused> {
      const started = turn.then(() => start(providerUid, clientAddress, time));
      turn = started.catch(() => undefined);
      return started;
    },
  };
}

function refused(tooMany: DeviceLoginRefused["tooMany"], firstExpiry: number | undefined, time: number): DeviceLoginRefused {
  return { tooMany, retryAfterSeconds: Math.max(1, Math.ceil(((firstExpiry ?? time) - time) / 1000)) };
}

/** The device login a person confirms by its user code (as typed), while it waits for them. */
export async function deviceLoginOf(db: Db, typedUserCode: string, time: number): Promise<{ uid: string; providerUid: string } | undefined> {
  const userCode = normalizeUserCode(typedUserCode);
  if (userCode === "") return undefined;
  const row = await liveLoginBy(db, "user_code", userCode, time);
  return row && row.kind === "device" && row.status === "started" ? { uid: row.uid, providerUid: row.provider_uid } : undefined;
}

/** The person confirmed the user code: the device login goes to the provider. False when it was confirmed already. */
export function redirectDeviceLogin(db: Db, uid: string, upstream: UpstreamRequest): Promise<boolean> {
  return advanceLogin(db, uid, "started", { status: "redirected", ...upstreamColumns(upstream) });
}

/** A login the provider came back to, taken once: undefined for a state unknown, expired or already used. */
export interface ReturningLogin {
  uid: string;
  kind: "browser" | "device";
  providerUid: string;
  nonce: string;
  upstreamVerifier: string;
  redirectUri: string;
  clientState: string;
}

export async function takeReturningLogin(db: Db, state: string, time: number): Promise<ReturningLogin | undefined> {
  const row = await liveLoginBy(db, "state_hash", secretHash(state), time);
  if (!row || !(await advanceLogin(db, row.uid, "redirected", { status: "returned" }))) return undefined;
  return {
    uid: row.uid,
    kind: row.kind === "device" ? "device" : "browser",
    providerUid: row.provider_uid,
    nonce: row.nonce,
    upstreamVerifier: row.upstream_verifier,
    redirectUri: row.redirect_uri,
    clientState: row.client_state,
  };
}

/** The provider signed the person in: a browser login answers a one-time code for its client; a device login waits for its poll. */
export async function finishLogin(db: Db, login: ReturningLogin, signedIn: SignedIn, time: number): Promise<{ code?: string }> {
  const code = login.kind === "browser" ? newSecret() : undefined;
  await advanceLogin(db, login.uid, "returned", {
    status: "signed_in",
    identity_uid: signedIn.identityUid,
    person: JSON.stringify(signedIn.person),
    upstream_refresh_token: signedIn.upstreamRefreshToken ?? "",
    code_hash: code === undefined ? "" : secretHash(code),
    // The code is for the client waiting now; a device grant keeps the rest of its time for the poll.
    ...(code === undefined ? {} : { expire_time: time + CODE_TTL_MS }),
  });
  return { code };
}

/** The sign-in failed (the provider refused, or its answer did not verify). */
export async function failLogin(db: Db, login: ReturningLogin, error: string): Promise<void> {
  await advanceLogin(db, login.uid, "returned", { status: "denied", error });
}

/** An OAuth error of the token endpoint (RFC 6749 5.2, RFC 8628 3.5). */
export interface GrantError {
  error: "invalid_grant" | "authorization_pending" | "slow_down" | "access_denied" | "expired_token";
  description: string;
}

export type Grant = { signedIn: SignedIn } | GrantError;

const pkceChallenge = (verifier: string) => createHash("sha256").update(verifier).digest("base64url");

function signedInOf(row: LoginRow): SignedIn {
  return { identityUid: row.identity_uid, person: JSON.parse(row.person) as PersonClaim, upstreamRefreshToken: row.upstream_refresh_token };
}

/**
 * Redeems a browser login's one-time code (RFC 6749 4.1.3, RFC 7636 4.6): once, by the client
 * that holds the verifier of its challenge, for the redirect URI it started with.
 */
export async function redeemLoginCode(db: Kysely<Database>, grant: { code: string; verifier: string; redirectUri: string }, time: number): Promise<Grant> {
  return inTransaction(db, undefined, async (trx): Promise<Grant> => {
    const row = await liveLoginBy(trx, "code_hash", secretHash(grant.code), time);
    if (!row || row.kind !== "browser" || !(await advanceLogin(trx, row.uid, "signed_in", { status: "redeemed", upstream_refresh_token: "" }))) {
      return { error: "invalid_grant", description: "the code is unknown, expired or already used" };
    }
    if (pkceChallenge(grant.verifier) !== row.code_challenge) return { error: "invalid_grant", description: "the code_verifier does not match the code_challenge" };
    if (grant.redirectUri !== row.redirect_uri) return { error: "invalid_grant", description: "the redirect_uri is not the one the login started with" };
    return { signedIn: signedInOf(row) };
  });
}

/** A device's poll (RFC 8628 3.4, 3.5). */
export async function pollDeviceLogin(db: Kysely<Database>, deviceCode: string, time: number): Promise<Grant> {
  return inTransaction(db, undefined, async (trx): Promise<Grant> => {
    const row = await liveLoginBy(trx, "device_code_hash", secretHash(deviceCode), time);
    if (!row || row.kind !== "device") return { error: "expired_token", description: "the device code is unknown or expired: start again" };
    if (row.status === "denied") return { error: "access_denied", description: row.error || "the sign-in was refused" };
    if (row.status === "redeemed") return { error: "invalid_grant", description: "the device code was already used" };
    if (row.status === "signed_in") {
      if (!(await advanceLogin(trx, row.uid, "signed_in", { status: "redeemed", upstream_refresh_token: "" }))) return { error: "invalid_grant", description: "the device code was already used" };
      return { signedIn: signedInOf(row) };
    }
    if (time - Number(row.last_poll_time) < row.poll_interval * 1000) {
      await setLoginPoll(trx, row.uid, time, row.poll_interval + 5);
      return { error: "slow_down", description: `poll at most every ${row.poll_interval + 5} s` };
    }
    await setLoginPoll(trx, row.uid, time, row.poll_interval);
    return { error: "authorization_pending", description: "the person has not signed in yet" };
  });
}
