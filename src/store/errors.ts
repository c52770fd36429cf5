/**
 * The store's own errors: what a repository found, in the store's terms. They know no wire
 * and no API; `apiErrorOf` (src/aip/store-errors.ts) is the one place that turns them into
 * the API's error vocabulary.
 */
export abstract class StoreError extends Error {}

/** No row `name` of `type`. */
export class NotFoundError extends StoreError {
  constructor(
    readonly type: string,
    readonly key: string,
  ) {
    super(`${type} ${key} not found`);
    this.name = "NotFoundError";
  }
}

/** A unique key is taken: `description` says by what, for the caller. */
export class ConflictError extends StoreError {
  constructor(
    readonly type: string,
    readonly key: string,
    readonly description: string,
  ) {
    super(description);
    this.name = "ConflictError";
  }
}

/** A row cannot go or change while others depend on it. */
export class InUseError extends StoreError {
  constructor(
    /** `RESOURCE_NOT_EMPTY` (children below it) or `RESOURCE_IN_USE` (referenced elsewhere). */
    readonly violation: "RESOURCE_NOT_EMPTY" | "RESOURCE_IN_USE",
    readonly subject: string,
    readonly description: string,
  ) {
    super(description);
    this.name = "InUseError";
  }
}

/** The caller's signal aborted (its deadline passed, or it left) before the transaction could commit: nothing was written. */
export class TransactionAbortedError extends StoreError {
  constructor(description: string) {
    super(description);
    this.name = "TransactionAbortedError";
  }
}

/** No row `key` of `type` (the store's NotFoundError; the API's is `notFound` in src/aip/errors.ts). */
export function rowNotFound(type: string, key: string): NotFoundError {
  return new NotFoundError(type, key);
}

/** A unique key of `type` is taken (the store's ConflictError; the API's is `alreadyExists`). */
export function keyTaken(type: string, key: string, description: string): ConflictError {
  return new ConflictError(type, key, description);
}

/** `type` `uid` still has rows below it. */
export function resourceNotEmpty(type: string, uid: string): InUseError {
  return new InUseError("RESOURCE_NOT_EMPTY", uid, `${type} ${uid} still has child resources`);
}

/** `uid` is referenced by another row, as `description` says. */
export function resourceInUse(uid: string, description: string): InUseError {
  return new InUseError("RESOURCE_IN_USE", uid, description);
}
