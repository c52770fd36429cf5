import { randomBytes } from "node:crypto";

/**
 * UIDPs: every resource uid is a path under the thing that owns it. A root uid is
 * 40 lowercase hex characters; a child is `<parent>/<16 hex>`. This module is the
 * only place that knows the grammar.
 */
export type Uidp = string;

/** The uidp filter of spec 4.1 / api-surface 1, independent of any wire shape. Set fields combine with AND. */
export interface UidpFilter {
  descendantsOf?: string;
  childrenOf?: string;
  ancestorsOf?: string;
  inRoot?: boolean;
  ids?: string[];
}

const UIDP = /^[0-9a-f]{40}(\/[0-9a-f]{16})*$/;
/** The longest uid accepted anywhere (about 240 levels of groups). */
export const MAX_UID_LENGTH = 4096;
const ROOT_LENGTH = 40;
const SEGMENT_LENGTH = 17; // "/" + 16 hex

export function isUidp(value: string): value is Uidp {
  return UIDP.test(value);
}

/** A new organization-level uid. */
export function newRootUid(): Uidp {
  return randomBytes(20).toString("hex");
}

/** A new uid one level below `parent`. */
export function newChildUid(parent: Uidp): Uidp {
  return `${parent}/${randomBytes(8).toString("hex")}`;
}

/** Number of segments: 1 for a root. */
export function depth(uid: Uidp): number {
  return 1 + (uid.length - ROOT_LENGTH) / SEGMENT_LENGTH;
}

/** Length of the uid of a direct child of `parent`. */
export function childUidLength(parent: Uidp): number {
  return parent.length + SEGMENT_LENGTH;
}

/** Length of a uid with `segments` segments. */
export function uidLength(segments: number): number {
  return ROOT_LENGTH + (segments - 1) * SEGMENT_LENGTH;
}

export function isRoot(uid: Uidp): boolean {
  return uid.length === ROOT_LENGTH;
}

/** The root (organization) uid of any uid. */
export function rootOf(uid: Uidp): Uidp {
  return uid.slice(0, ROOT_LENGTH);
}

/** The parent uid, or undefined for a root. */
export function parentOf(uid: Uidp): Uidp | undefined {
  return isRoot(uid) ? undefined : uid.slice(0, uid.length - SEGMENT_LENGTH);
}

/**
 * Drops `segments` trailing segments: the owning group of a resource `segments`
 * levels below it. Undefined when the uid is not that deep.
 */
export function stripSegments(uid: Uidp, segments: number): Uidp | undefined {
  const length = uid.length - segments * SEGMENT_LENGTH;
  return length >= ROOT_LENGTH ? uid.slice(0, length) : undefined;
}

/** Proper ancestors, root first. */
export function ancestorsOf(uid: Uidp): Uidp[] {
  const out: Uidp[] = [];
  for (let length = ROOT_LENGTH; length < uid.length; length += SEGMENT_LENGTH) {
    out.push(uid.slice(0, length));
  }
  return out;
}

/** The uid itself and its proper ancestors, root first. */
export function selfAndAncestors(uid: Uidp): Uidp[] {
  return [...ancestorsOf(uid), uid];
}

/** True when `uid` lies strictly below `ancestor`. */
export function isDescendant(uid: Uidp, ancestor: Uidp): boolean {
  return uid.length > ancestor.length && uid.startsWith(ancestor) && uid[ancestor.length] === "/";
}

/** True when `uid` is `ancestor` or lies below it. */
export function isSelfOrDescendant(uid: Uidp, ancestor: Uidp): boolean {
  return uid === ancestor || isDescendant(uid, ancestor);
}

/**
 * The half-open range [low, high) of strings holding exactly `uid` and its descendants under
 * byte-order collation: `uid` up to `uid + "0"`.
 */
export function subtreeRange(uid: Uidp): { low: string; high: string } {
  return { low: uid, high: `${uid}0` };
}

/**
 * The half-open range [low, high) of strings holding exactly the strict descendants
 * of `uid` under byte-order collation: `uid + "/"` up to `uid + "0"` ("0" follows "/").
 */
export function descendantRange(uid: Uidp): { low: string; high: string } {
  return { low: `${uid}/`, high: `${uid}0` };
}
