// Typed errors of the version matcher. Callers turn both into INVALID_ARGUMENT naming the field
// that carried the ecosystem or the version.

/** An OSV ecosystem name this library has no version ordering for. */
export class UnknownEcosystemError extends Error {
  constructor(readonly ecosystem: string) {
    super(`unknown ecosystem ${JSON.stringify(ecosystem)}`);
    this.name = "UnknownEcosystemError";
  }
}

/** A version that is not valid in its ecosystem's version syntax. */
export class InvalidVersionError extends Error {
  constructor(
    readonly ecosystem: string,
    readonly version: string,
  ) {
    super(`${JSON.stringify(version)} is not a valid ${ecosystem} version`);
    this.name = "InvalidVersionError";
  }
}
