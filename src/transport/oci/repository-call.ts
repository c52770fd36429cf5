import type { Repository } from "../../domains/registry/index.js";
import type { RegistryContext, RegistryRequest, RegistryResponse } from "./context.js";
import type { RepositoryAccess } from "./registry-auth.js";

/**
 * What the host has settled of a request on one repository before its endpoint runs: the name
 * parsed, the caller authorized for the route's action (`access`: what it may do, who it is), and
 * the repository's handle (its row read at most once in the request, shared with the authorization).
 */
export interface RepositoryCall {
  repo: Repository;
  access: RepositoryAccess;
}

/** An endpoint on a repository: the rest of its route's match (after the name) and the query. */
export type RepositoryEndpoint = (ctx: RegistryContext, req: RegistryRequest, res: RegistryResponse, call: RepositoryCall, match: string[], query: URLSearchParams) => Promise<void>;
