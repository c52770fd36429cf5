import { invalidArgument, type FieldViolation } from "./errors.js";
import { childUidLength, isUidp, MAX_UID_LENGTH } from "./uidp.js";

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
