import { createHash } from "node:crypto";
import { failedPrecondition, notFound } from "../../aip/errors.js";
import { isRoot } from "../../aip/uidp.js";
import type { Kysely } from "kysely";
import type { Database, Db } from "../kit/schema.js";
import { inTransaction } from "../../store/transaction.js";
import type { PersonClaim, Principal } from "../../access/principal.js";
import { serverWidePersonUid } from "../../access/person-token.js";
import type { SecretBox } from "../../store/secret-box.js";
import { inviteCodeHash } from "./group-invite-mapper.js";
import { checkBindingScope } from "./role-binding-validation.js";
import { existingBinding, findGroupInviteByCodeHash, identityExists, markGroupInviteUsed } from "./store/group-invites.js";
import { getIdentityProvider } from "./store/identity-providers.js";
import { insertIdentity, touchLastSeen } from "./store/identities.js";
import { bindRole, insertRoleBinding } from "./store/role-bindings.js";
import { getRole, rolesByUid } from "./store/roles.js";
import { newChildUid } from "../../aip/uidp.js";

/**
 * People: identities keyed by the (issuer, subject) of the provider that signed them in
 * (docs/authorization.md, "People sign in").
 *
 * - Through the server-wide provider, a person's identity is server-wide: a root-level uid derived
 *   from (issuer, subject), created when they first redeem an invite or create an organization.
 * - Through an organization's IdentityProvider, it lives in that organization: a uid below the
 *   organization derived from (provider, issuer, subject), created at first login with the
 *   provider's default role, and its groups claim is mapped through the provider's external group
 *   role mappings at every login.
 */

/** What a provider's verified ID token says of a person. */
export interface Person {
  issuer: string;
  subject: string;
  /** The email, only when the provider says it is verified. */
  email?: string;
  name?: string;
}

/** The login view of an organization's OIDC IdentityProvider (its client secret opened). */
export interface LoginProvider {
  uid: string;
  organization: string;
  name: string;
  issuer: string;
  clientId: string;
  /** "" for a public client (PKCE only). */
  clientSecret: string;
  additionalScopes: string[];
  groupsClaim: string;
  defaultRoleUid: string;
}

const digest = (...parts: string[]) => createHash("sha256").update(parts.join("\n")).digest("hex");


/** The identity uid of a person of an organization's provider: below the organization. */
export function organizationPersonUid(provider: Pick<LoginProvider, "uid" | "organization">, person: Pick<Person, "issuer" | "subject">): string {
  return `${provider.organization}/${digest(provider.uid, person.issuer, person.subject).slice(0, 16)}`;
}

/** An organization's IdentityProvider for a login; NOT_FOUND when `uid` is none, FAILED_PRECONDITION when it has no OIDC client. */
export async function loginProviderOf(db: Db, secrets: SecretBox, uid: string): Promise<LoginProvider> {
  const row = await getIdentityProvider(db, uid);
  if (row.issuer === "" || row.client_id === "") {
    throw failedPrecondition([{ type: "IDENTITY_PROVIDER_NOT_OIDC", subject: uid, description: "this identity provider has no OIDC client to sign in with" }]);
  }
  return {
    uid: row.uid,
    organization: row.group_uid,
    name: row.name,
    issuer: row.issuer,
    clientId: row.client_id,
    clientSecret: row.client_secret === "" ? "" : secrets.open(row.client_secret),
    additionalScopes: JSON.parse(row.additional_scopes || "[]") as string[],
    groupsClaim: row.groups_claim,
    defaultRoleUid: row.default_role_uid,
  };
}

function personIdentityRow(uid: string, group: string, person: Person, description: string, time: number) {
  return {
    uid,
    group_uid: group,
    name: (person.name || person.email || person.subject).slice(0, 128),
    description,
    claim_match: JSON.stringify({ issuer: person.issuer, subject: person.subject }),
    static_keys: "",
    last_seen_time: time,
    create_time: time,
    update_time: time,
  };
}

/** Creates the server-wide person's identity when it does not exist yet. Run in a transaction. */
async function ensureServerWidePerson(db: Db, person: Person, time: number): Promise<string> {
  const uid = serverWidePersonUid(person);
  if (!(await identityExists(db, uid))) await insertIdentity(db, personIdentityRow(uid, "", person, "A person signed in through the server's login", time));
  return uid;
}

/**
 * A person signed in through the server-wide provider: their identity uid, and whether it exists
 * (registered). Nothing is created: an unregistered person may only register or create an organization.
 */
export async function signInServerWide(db: Db, person: Person, time: number): Promise<{ identityUid: string; registered: boolean }> {
  const identityUid = serverWidePersonUid(person);
  const registered = await identityExists(db, identityUid);
  if (registered) await touchLastSeen(db, identityUid, time);
  return { identityUid, registered };
}

/**
 * A person signed in through an organization's provider: their identity in the organization,
 * created at first login with the provider's default role on the organization; then the role
 * bindings its external group role mappings make are set to match `groups` (the values of the
 * provider's groups claim): bindings of mappings no longer matched are removed, new ones added.
 * A binding a caller made is never touched. Run in a transaction.
 */
export async function signInToOrganization(db: Db, provider: LoginProvider, person: Person, groups: readonly string[], time: number): Promise<string> {
  const uid = organizationPersonUid(provider, person);
  if (await identityExists(db, uid)) await touchLastSeen(db, uid, time);
  else {
    await insertIdentity(db, personIdentityRow(uid, provider.organization, person, `A person signed in through ${provider.name}`, time));
    if (provider.defaultRoleUid !== "") await bindRole(db, provider.organization, uid, provider.defaultRoleUid, time);
  }
  if (provider.groupsClaim !== "") await syncMappedBindings(db, provider.uid, uid, new Set(groups), time);
  return uid;
}

/**
 * A person of an organization's provider refreshing their session, with what the provider says of
 * them now: the identity is not created (undefined when it no longer exists: the session ends), and
 * the role bindings its external group role mappings make are set to match `groups`, as at a login.
 * Run in a transaction.
 */
export async function refreshOrganizationPerson(db: Db, provider: LoginProvider, person: Person, groups: readonly string[], time: number): Promise<string | undefined> {
  const uid = organizationPersonUid(provider, person);
  if (!(await identityExists(db, uid))) return undefined;
  await touchLastSeen(db, uid, time);
  if (provider.groupsClaim !== "") await syncMappedBindings(db, provider.uid, uid, new Set(groups), time);
  return uid;
}

async function syncMappedBindings(db: Db, providerUid: string, identityUid: string, groups: ReadonlySet<string>, time: number): Promise<void> {
  const mappings = await db
    .selectFrom("external_group_role_mappings")
    .select(["uid", "group_uid", "external_group", "role_uid"])
    .where("identity_provider_uid", "=", providerUid)
    .execute();
  const wanted = mappings.filter((m) => groups.has(m.external_group));
  const held = await db
    .selectFrom("role_bindings")
    .select(["uid", "managed_by"])
    .where("identity_uid", "=", identityUid)
    .where("managed_by", "<>", "")
    .execute();
  const wantedUids = new Set(wanted.map((m) => m.uid));
  const stale = held.filter((b) => !wantedUids.has(b.managed_by)).map((b) => b.uid);
  if (stale.length > 0) await db.deleteFrom("role_bindings").where("uid", "in", stale).execute();
  const heldBy = new Set(held.map((b) => b.managed_by));
  for (const mapping of wanted) {
    if (heldBy.has(mapping.uid)) continue;
    // A caller already granted this role here: that binding stays theirs, and is enough.
    if (await existingBinding(db, mapping.group_uid, identityUid, mapping.role_uid)) continue;
    const binding = { uid: newChildUid(mapping.group_uid), group_uid: mapping.group_uid, identity_uid: identityUid, role_uid: mapping.role_uid, create_time: time };
    await insertRoleBinding(db, binding, mapping.uid);
  }
}

/** What redeeming an invite did. */
export interface Redemption {
  identityUid: string;
  groupUid: string;
  roleUid: string;
  /** The binding made, or the one the identity already had. */
  bindingUid: string;
  /** Whether this redemption made the binding (false: the identity had it; nothing changed). */
  bound: boolean;
}

/**
 * Redeems an invite for `identityUid` (RedeemGroupInvite, and POST /auth/v1/register). An invite
 * bound to an email admits only a caller whose provider verified that address (`verifiedEmail`,
 * compared case-insensitively); a single-use invite admits one redemption. When `person` is given
 * and `identityUid` is their server-wide identity, it is created if missing (registration).
 * Run in a transaction.
 */
export async function redeemInvite(
  db: Db,
  redeemer: { identityUid: string; verifiedEmail?: string; person?: Person },
  code: string,
  time: number,
): Promise<Redemption> {
  const invite = await findGroupInviteByCodeHash(db, inviteCodeHash(code));
  if (!invite) throw notFound("group invite", "(the given code)");
  if (invite.expire_time <= time) throw failedPrecondition([{ type: "INVITE_EXPIRED", subject: invite.uid, description: "this invite has expired" }]);
  if (invite.single_use === 1 && invite.used_time !== null) throw inviteUsed(invite.uid);
  if (invite.email !== "" && invite.email.toLowerCase() !== (redeemer.verifiedEmail ?? "").toLowerCase()) {
    throw failedPrecondition([
      {
        type: "INVITE_EMAIL_MISMATCH",
        subject: invite.uid,
        description: "this invite is for another email address: sign in with the account whose verified email it names",
      },
    ]);
  }
  // The binding rule of CreateRoleBinding: an identity of another organization (or of a group
  // not above the invite's) cannot join by a code either.
  checkBindingScope(invite.group_uid, redeemer.identityUid, invite.role_uid);
  await getRole(db, invite.role_uid);
  const { identityUid } = redeemer;
  if (redeemer.person && isRoot(identityUid) && identityUid === serverWidePersonUid(redeemer.person)) await ensureServerWidePerson(db, redeemer.person, time);
  else if (!(await identityExists(db, identityUid))) throw notFound("identity", identityUid);
  let bindingUid = await existingBinding(db, invite.group_uid, identityUid, invite.role_uid);
  const bound = !bindingUid;
  if (!bindingUid) {
    if (invite.single_use === 1 && !(await markGroupInviteUsed(db, invite.uid, time))) throw inviteUsed(invite.uid);
    bindingUid = (await bindRole(db, invite.group_uid, identityUid, invite.role_uid, time)).uid;
  }
  return { identityUid, groupUid: invite.group_uid, roleUid: invite.role_uid, bindingUid, bound };
}

/** The person a platform token's `person` claim describes. */
export function personOf(claim: PersonClaim): Person {
  return { issuer: claim.iss, subject: claim.sub, email: claim.email, name: claim.name };
}

/** Who redeems an invite: the caller, with the email their provider verified and, for a person, who they are. */
function redeemerOf(caller: Principal): Parameters<typeof redeemInvite>[1] {
  return { identityUid: caller.identityUid, verifiedEmail: caller.person?.email, person: caller.person && personOf(caller.person) };
}

/**
 * Redeems `code` for `caller` in a transaction of its own and answers `answer(redemption)` from inside
 * it (RedeemGroupInvite, POST /auth/v1/register): a redemption that binds nothing new (the caller had
 * the binding) answers the same and marks the transaction unchanged, so it sends no event.
 */
export async function redeemInviteOnce<R>(db: Kysely<Database>, signal: AbortSignal | undefined, caller: Principal, code: string, time: number, answer: (done: Redemption) => R): Promise<R> {
  let bound = false;
  return inTransaction(
    db,
    signal,
    async (trx) => {
      const done = await redeemInvite(trx, redeemerOf(caller), code, time);
      bound = done.bound;
      return answer(done);
    },
    { changed: () => bound },
  );
}

/** Creates the caller's server-wide identity before it owns a new organization (CreateGroup of an unregistered person). */
export function registerForOrganization(db: Db, person: Person, time: number): Promise<string> {
  return ensureServerWidePerson(db, person, time);
}

function inviteUsed(uid: string) {
  return failedPrecondition([{ type: "INVITE_USED", subject: uid, description: "this single-use invite was already redeemed" }]);
}

/** One role binding of an identity, with its group and role (WhoAmI). */
export interface HeldBinding {
  group: { uid: string; name: string; description: string };
  role: { uid: string; name: string; description: string; capabilities: string[] };
}

/** Every role binding of an identity, by group then role. */
export async function bindingsOfIdentity(db: Db, identityUid: string): Promise<HeldBinding[]> {
  const rows = await db
    .selectFrom("role_bindings")
    .innerJoin("groups", "groups.uid", "role_bindings.group_uid")
    .select(["role_bindings.role_uid", "groups.uid as group_uid", "groups.name as group_name", "groups.description as group_description"])
    .where("role_bindings.identity_uid", "=", identityUid)
    .orderBy("groups.uid")
    .orderBy("role_bindings.role_uid")
    .execute();
  const roles = await rolesByUid(db, rows.map((r) => r.role_uid));
  return rows.flatMap((row) => {
    const role = roles.get(row.role_uid);
    if (!role) return [];
    return [
      {
        group: { uid: row.group_uid, name: row.group_name, description: row.group_description },
        role: { uid: role.uid, name: role.name, description: role.description, capabilities: role.capabilities },
      },
    ];
  });
}

/** The identities bound to `roleUid` (the built-in owner role) on a group, by uid. */
export async function ownersOf(db: Db, groupUid: string, roleUid: string): Promise<Array<{ uid: string; name: string }>> {
  return db
    .selectFrom("role_bindings")
    .innerJoin("identities", "identities.uid", "role_bindings.identity_uid")
    .select(["identities.uid", "identities.name"])
    .where("role_bindings.group_uid", "=", groupUid)
    .where("role_bindings.role_uid", "=", roleUid)
    .orderBy("identities.uid")
    .execute();
}
