import type { JWTPayload } from "jose";
import type { Kysely } from "kysely";
import { refreshLifetimesOf, type LoginConfig } from "../../config.js";
import { startRefreshFamily, type SignedIn } from "../../domains/auth/index.js";
import { signInServerWide, signInToOrganization, type LoginProvider } from "../../domains/iam/index.js";
import type { Database } from "../../domains/schema.js";
import { inTransaction } from "../../store/transaction.js";
import { PERSON_CLAIM } from "../person-token.js";
import type { PersonClaim } from "../principal.js";
import type { TokenService } from "../tokens.js";

/**
 * A person a provider vouched for (the claims of a verified ID token), as the identity they act as:
 * the server-wide provider's people by (issuer, subject), found but not created; an organization's
 * provider's people created at first login and their groups mapped (src/domains/iam/people.ts).
 */
export async function admitPerson(db: Kysely<Database>, provider: { uid: string; organization?: LoginProvider }, claims: JWTPayload, time: number): Promise<SignedIn> {
  const iss = String(claims.iss);
  const sub = String(claims.sub);
  const email = claims.email_verified === true && typeof claims.email === "string" ? claims.email : undefined;
  const name = typeof claims.name === "string" ? claims.name : undefined;
  const person = { issuer: iss, subject: sub, email, name };
  const claim: PersonClaim = { iss, sub, idp: provider.uid, ...(email ? { email } : {}), ...(name ? { name } : {}) };
  const organization = provider.organization;
  if (!organization) return { identityUid: (await signInServerWide(db, person, time)).identityUid, person: claim };
  const groups = organization.groupsClaim === "" ? [] : stringsOf(claims[organization.groupsClaim]);
  const identityUid = await inTransaction(db, undefined, (trx) => signInToOrganization(trx, organization, person, groups, time));
  return { identityUid, person: claim };
}

/** A person's platform access token (claim `person`) and the first refresh token of a new family. */
export async function issuePersonTokens(
  db: Kysely<Database>,
  tokens: TokenService,
  login: LoginConfig,
  audience: string,
  signedIn: SignedIn,
  time: number,
): Promise<{ token: string; expiry: string; refreshToken: string }> {
  const access = await personAccessToken(tokens, login, audience, signedIn);
  const refresh = await startRefreshFamily(db, signedIn, refreshLifetimesOf(login), time);
  return { token: access.token, expiry: access.expiry.toISOString(), refreshToken: refresh.token };
}

export function personAccessToken(tokens: TokenService, login: LoginConfig, audience: string, signedIn: SignedIn) {
  return tokens.issue({ subject: signedIn.identityUid, audience, ttlSeconds: login.accessTokenTtlSeconds, claims: { [PERSON_CLAIM]: signedIn.person } });
}

/** A claim's string values: a string, or the strings of an array. */
function stringsOf(value: unknown): string[] {
  if (typeof value === "string") return [value];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}
