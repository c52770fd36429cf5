import { ConflictError, InUseError, NotFoundError, TransactionAbortedError, type StoreError } from "../store/errors.js";
import { alreadyExists, deadlineExceeded, failedPrecondition, notFound, type ApiError } from "./errors.js";

/** The API error for a store error: NOT_FOUND, ALREADY_EXISTS, FAILED_PRECONDITION with its violation, or DEADLINE_EXCEEDED. */
export function apiErrorOf(error: StoreError): ApiError {
  if (error instanceof NotFoundError) return notFound(error.type, error.key);
  if (error instanceof ConflictError) return alreadyExists(error.type, error.key, error.description);
  if (error instanceof InUseError) return failedPrecondition([{ type: error.violation, subject: error.subject, description: error.description }]);
  if (error instanceof TransactionAbortedError) return deadlineExceeded(error.message);
  throw new Error(`unmapped store error ${error.name}`);
}
