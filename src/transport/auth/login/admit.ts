import type { JWTPayload } from "jose";
import type { Kysely } from "kysely";
import { refreshLifetimesOf, type LoginConfig } from "../../../config.js";
import { startRefreshFamily, type SignedIn } from "../../../domains/auth/index.js";
import { refreshOrganizationPerson, signInServerWide, signInToOrganization, type LoginProvider, type Person } from "../../../domains/iam/index.js";
import type { Database } from "../../../domains/kit/schema.js";
import { inTransaction } from "../../../store/transaction.js";
import { PERSON_CLAIM } from "../../../access/person-token.js";
import type { PersonClaim } from "../../../access/principal.js";
import type { TokenRequest } from "../token-request.js";
import { restrictionClaims } from "../../../access/token-restriction.js";
import type { TokenService } from "../../../access/tokens.js";

/** The provider a person signed in with: the server-wide one (`uid` "") or an organization's. */
export interface AdmittingProvider {
  uid: string;
  organization?: LoginProvider;
}

/** What a provider's verified claims say of a person, and the `person` claim of their platform tokens. */
function personOf(provider: AdmittingProvider, claims: JWTPayload): { person: Person; claim: PersonClaim; groups: string[] } {
  const iss = String(claims.iss);
  const sub = String(claims.sub);
  const email = claims.email_verified === true && typeof claims.email === "string" ? claims.email : undefined;
  const name = typeof claims.name === "string" ? claims.name : undefined;
  const claim: PersonClaim = { iss, sub, idp: provider.uid, ...(email ? { email } : {}), ...(name ? { name } : {}) };
  const groupsClaim = provider.organization?.groupsClaim ?? "";
  return { person: { issuer: iss, subject: sub, email, name }, claim, groups: groupsClaim === "" ? [] : stringsOf(claims[groupsClaim]) };
}

/**
 * A person a provider vouched for (the claims of a verified ID token), as the identity they act as:
 * the server-wide provider's people by (issuer, subject), found but not created; an organization's
 * provider's people created at first login and their groups mapped (src/domains/iam/people.ts).
 */
export async function admitPerson(db: Kysely<Database>, provider: AdmittingProvider, claims: JWTPayload, time: number): Promise<SignedIn> {
  const { person, claim, groups } = personOf(provider, claims);
  const organization = provider.organization;
  if (!organization) return { identityUid: (await signInServerWide(db, person, time)).identityUid, person: claim };
  const identityUid = await inTransaction(db, undefined, (trx) => signInToOrganization(trx, organization, person, groups, time));
  return { identityUid, person: claim };
}

/**
 * The person of a session being refreshed, with the claims their provider answered now: as
 * `admitPerson`, except that an organization's person is never created (undefined when their
 * identity is gone: the session ends), while their mapped groups are set to what the claims say.
 */
export async function readmitPerson(db: Kysely<Database>, provider: AdmittingProvider, claims: JWTPayload, time: number): Promise<SignedIn | undefined> {
  const { person, claim, groups } = personOf(provider, claims);
  const organization = provider.organization;
  if (!organization) return { identityUid: (await signInServerWide(db, person, time)).identityUid, person: claim };
  const identityUid = await inTransaction(db, undefined, (trx) => refreshOrganizationPerson(trx, organization, person, groups, time));
  return identityUid === undefined ? undefined : { identityUid, person: claim };
}

/** A person's platform access token (claim `person`) and the first refresh token of a new family, which lives as long as its provider allows. */
export async function issuePersonTokens(
  db: Kysely<Database>,
  tokens: TokenService,
  login: LoginConfig,
  request: Pick<TokenRequest, "audiences" | "restriction">,
  signedIn: SignedIn,
  time: number,
): Promise<{ token: string; expiry: string; refreshToken: string }> {
  const access = await personAccessToken(tokens, login, request, signedIn);
  const refresh = await startRefreshFamily(db, signedIn, refreshLifetimesOf(login, signedIn.person.idp !== ""), time);
  return { token: access.token, expiry: access.expiry.toISOString(), refreshToken: refresh.token };
}

/** A person's access token for `request`'s audiences, narrowed to its restriction when it has one. */
export function personAccessToken(tokens: TokenService, login: LoginConfig, request: Pick<TokenRequest, "audiences" | "restriction">, signedIn: SignedIn) {
  const claims = { [PERSON_CLAIM]: signedIn.person, ...(request.restriction && restrictionClaims(request.restriction)) };
  return tokens.issue({ subject: signedIn.identityUid, audience: request.audiences, ttlSeconds: login.accessTokenTtlSeconds, claims });
}

/** A claim's string values: a string, or the strings of an array. */
function stringsOf(value: unknown): string[] {
  if (typeof value === "string") return [value];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}
