import type { ServerConfig } from "../../config.js";
import type { NodeRequest, NodeResponse } from "../http/node-types.js";
import { SIGNING_ALGORITHM, type TokenService } from "../../access/tokens.js";

export const JWKS_PATH = "/.well-known/jwks.json";
export const DISCOVERY_PATH = "/.well-known/openid-configuration";

/**
 * OIDC discovery and the JWKS, so anyone can verify the server's tokens. Plain
 * HTTP by nature (not RPCs). Resolves false for any other path.
 */
export function createDiscoveryRoutes(config: ServerConfig, tokens: TokenService) {
  const discovery = JSON.stringify({
    issuer: config.apiUrl,
    jwks_uri: new URL(JWKS_PATH, config.apiUrl).toString(),
    response_types_supported: ["id_token"],
    subject_types_supported: ["public"],
    id_token_signing_alg_values_supported: [SIGNING_ALGORITHM],
    claims_supported: ["iss", "sub", "aud", "exp", "iat", "jti"],
  });
  return async (req: NodeRequest, res: NodeResponse): Promise<boolean> => {
    const path = req.url?.split("?")[0];
    if (req.method !== "GET" && req.method !== "HEAD") return false;
    let body: string;
    if (path === DISCOVERY_PATH) body = discovery;
    else if (path === JWKS_PATH) body = JSON.stringify(tokens.jwks());
    else return false;
    res.writeHead(200, { "content-type": "application/json", "cache-control": "public, max-age=300" });
    res.end(req.method === "HEAD" ? "" : body);
    return true;
  };
}
