import * as client from "openid-client";
import type { JWTPayload } from "jose";
import type { Kysely } from "kysely";
import { ApiError } from "../../../aip/errors.js";
import type { SignedIn } from "../../../domains/auth/index.js";
import { loginProviderOf } from "../../../domains/iam/index.js";
import type { Database } from "../../../domains/kit/schema.js";
import { NotFoundError } from "../../../store/errors.js";
import type { SecretBox } from "../../../store/secret-box.js";
import { readmitPerson } from "./admit.js";
import type { ProviderClients } from "./provider-clients.js";

/** What asking the person's provider at a refresh decided: who the next tokens speak for, or that the session ends (why, for the log). */
export type ProviderVerdict = { signedIn: SignedIn } | { ended: string };

/** The provider could not be asked (unreachable, an answer of its own failing, one that does not verify): nothing is decided, the caller may retry. */
export class ProviderUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ProviderUnavailableError";
  }
}

/**
 * A refresh asks the person's provider again (docs/authorization.md, "People sign in"):
 * - an organization's IdentityProvider that was deleted (or lost its OIDC client) ends the
 *   sessions it started; so does the server-wide provider once the server no longer has one;
 * - where the provider issued a refresh token at the login, it is spent at the provider's token
 *   endpoint (openid-client), and the ID token (or, without one, the userinfo) it answers is what
 *   the person is now: their mapped groups are set to its groups claim as at a login, their name
 *   and verified email taken; the provider refusing the refresh (`invalid_grant`: the person was
 *   deleted, signed out, or the grant revoked), another subject, or the identity gone ends the
 *   session. The provider's next refresh token (or the same, when it does not rotate) goes on,
 *   sealed, with the next of ours;
 * - where it issued none, nothing is asked: the family's short life bounds what the person keeps.
 * Throws ProviderUnavailableError when the provider cannot be asked.
 */
export function createProviderRecheck(options: { db: Kysely<Database>; secrets: SecretBox; providers: ProviderClients; now: () => number }) {
  const { db, secrets, providers, now } = options;

  /** The organization's provider still exists as an OIDC client; false when deleted or no longer OIDC. */
  async function stillThere(providerUid: string): Promise<boolean> {
    try {
      await loginProviderOf(db, secrets, providerUid);
      return true;
    } catch (error) {
      if (error instanceof NotFoundError || error instanceof ApiError) return false;
      throw error;
    }
  }

  return async function recheck(held: SignedIn): Promise<ProviderVerdict> {
    const providerUid = held.person.idp;
    const sealed = held.upstreamRefreshToken ?? "";
    if (providerUid === "" && !providers.hasServerWide) return { ended: "the server no longer has a login provider of its own" };
    if (providerUid !== "" && !(await stillThere(providerUid))) return { ended: `identity provider ${providerUid} was deleted or has no OIDC client` };
    if (sealed === "") return { signedIn: held };

    let provider;
    try {
      provider = await providers.resolve(providerUid);
    } catch (error) {
      throw new ProviderUnavailableError(`discovery of the provider failed: ${String(error)}`);
    }
    let claims: JWTPayload;
    let next: string | undefined;
    try {
      const answer = await client.refreshTokenGrant(provider.config, secrets.open(sealed));
      next = answer.refresh_token;
      claims = answer.claims() ?? { ...(await client.fetchUserInfo(provider.config, answer.access_token, held.person.sub)), iss: held.person.iss };
    } catch (error) {
      if (error instanceof client.ResponseBodyError && error.status < 500) return { ended: `the provider refused the refresh (${error.error})` };
      throw new ProviderUnavailableError(`the provider's refresh failed: ${String(error)}`);
    }
    if (claims.iss !== held.person.iss || claims.sub !== held.person.sub) return { ended: "the provider answered for another person" };
    const signedIn = await readmitPerson(db, provider, claims, now());
    if (!signedIn) return { ended: `identity ${held.identityUid} no longer exists` };
    return { signedIn: { ...signedIn, upstreamRefreshToken: next ? secrets.seal(next) : sealed } };
  };
}
