import type { JWTPayload } from "jose";
import { createHash } from "node:crypto";
import type { PersonClaim } from "./principal.js";

/** The claim of a platform token that carries what the login verified of a person. */
export const PERSON_CLAIM = "person";

/**
 * The person a verified platform token speaks for, if any. `unregisteredUid` is set for a person
 * of the server-wide provider (`idp` ""): the only identity such a token may name before it exists
 * is the one that person's registration creates.
 */
export function personOf(claims: JWTPayload): { claim: PersonClaim; unregisteredUid?: string } | undefined {
  const value = claims[PERSON_CLAIM];
  if (!value || typeof value !== "object") return undefined;
  const { iss, sub, email, name, idp } = value as Record<string, unknown>;
  if (typeof iss !== "string" || typeof sub !== "string" || typeof idp !== "string") return undefined;
  const claim: PersonClaim = { iss, sub, idp };
  if (typeof email === "string") claim.email = email;
  if (typeof name === "string") claim.name = name;
  return { claim, unregisteredUid: idp === "" ? serverWidePersonUid({ issuer: iss, subject: sub }) : undefined };
}

/** The identity uid of a person of the server-wide provider: root-level, from (issuer, subject). */
export function serverWidePersonUid(person: { issuer: string; subject: string }): string {
  return createHash("sha256").update([person.issuer, person.subject].join("\n")).digest("hex").slice(0, 40);
}
