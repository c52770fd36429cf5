import { invalidArgument, type FieldViolation } from "./errors.js";
import { isUidp } from "./uidp.js";

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
    } else if (value.length > 4096 || !isUidp(value)) {
      this.add(field, "must be a uid: 40 lowercase hex characters, then /-separated groups of 16");
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
