import { invalidArgument, type FieldViolation } from "./errors.js";
import { childUidLength, isUidp, MAX_UID_LENGTH } from "./uidp.js";

/**
 * The hosted API's patterns for the names and descriptions of its resources (hosted-api.md,
 * "Validation regexes"), v1 and v2 alike; the lengths are ours (`Violations.name`, `.description`).
 * Organization names (`ORGANIZATION_NAME`) and repo names are stricter: they are registry paths.
 */
export const RESOURCE_NAME = /^[a-z0-9 ._-]+$/;
export const DESCRIPTION = /^[\S ]*$/;
/** The longest description of any resource. */
export const MAX_DESCRIPTION = 1024;

/**
 * Collects every failing field of a request, then throws one INVALID_ARGUMENT
 * naming them all (spec 7 rule 1).
 */
export class Violations {
  readonly list: FieldViolation[] = [];

  add(field: string, description: string): this {
    this.list.push({ field, description });
    return this;
  }

  /** Throws INVALID_ARGUMENT when anything was added. */
  throwIfAny(): void {
    if (this.list.length > 0) throw invalidArgument(this.list);
  }

  /** A UIDP field; `required: false` admits the empty string. */
  uid(field: string, value: string, required = true): this {
    if (value === "") {
      if (required) this.add(field, "is required");
    } else if (value.length > MAX_UID_LENGTH || !isUidp(value)) {
      this.add(field, "must be a uid: 40 lowercase hex characters, then /-separated groups of 16");
    }
    return this;
  }

  /** The uid of a parent something is created below: a uid (`uid`) with room for a child's uid within MAX_UID_LENGTH. */
  parent(field: string, value: string, required = true): this {
    const before = this.list.length;
    this.uid(field, value, required);
    if (this.list.length === before && value !== "" && childUidLength(value) > MAX_UID_LENGTH) {
      this.add(field, `is nested too deep: a uid below it would be longer than ${MAX_UID_LENGTH} characters`);
    }
    return this;
  }

  /** A free-text field of at most `max` characters with no control characters. */
  /** A resource's name: lowercase letters, digits, spaces, `.`, `_`, `-` (RESOURCE_NAME), at most `max`. */
  name(field: string, value: string, opts: { required?: boolean; max: number }): this {
    return this.text(field, value, { ...opts, pattern: RESOURCE_NAME });
  }

  /** A resource's description: one line, no whitespace but spaces (DESCRIPTION), at most MAX_DESCRIPTION. */
  description(field: string, value: string): this {
    return this.text(field, value, { max: MAX_DESCRIPTION, pattern: DESCRIPTION });
  }

  text(field: string, value: string, opts: { required?: boolean; max: number; pattern?: RegExp }): this {
    if (value === "") {
      if (opts.required) this.add(field, "is required");
      return this;
    }
    if (value.length > opts.max) this.add(field, `must be at most ${opts.max} characters`);
    else if (opts.pattern && !opts.pattern.test(value)) this.add(field, `must match ${opts.pattern.source}`);
    else if (/[\u0000-\u001f\u007f]/.test(value)) this.add(field, "must not contain control characters");
    return this;
  }
}
