import { Code } from "@connectrpc/connect";
import type { Kysely } from "kysely";
import { codeName, errorDomainOf } from "../../aip/errors.js";
import type { ServerConfig } from "../../config.js";
import type { TokenService } from "../../access/tokens.js";
import { personOf } from "../../access/person-token.js";
import { restrictionOf } from "../../access/token-restriction.js";
import {
  createRegistryPassword,
  listRegistryPasswords,
  MAX_REGISTRY_PASSWORD_DESCRIPTION,
  MAX_REGISTRY_PASSWORD_TTL_MS,
  MAX_REGISTRY_PASSWORDS,
  MIN_REGISTRY_PASSWORD_TTL_MS,
  revokeRegistryPassword,
  type RegistryPassword,
} from "../../domains/auth/index.js";
import type { Database } from "../../domains/kit/schema.js";
import { isUnavailable } from "../../store/dialect.js";
import type { AuditLog } from "../../telemetry/audit-log.js";
import { requestIdOf } from "../../telemetry/request-id.js";
import { BodyRefusedError, readBody } from "../http/body-reader.js";
import { bearerChallenge, bearerToken } from "../http/credentials.js";
import type { NodeRequest, NodeResponse } from "../http/node-types.js";
import { sendStatus, writeJson } from "../http/status-json.js";

/** `POST` makes one, `GET` lists them; `DELETE <path>/<id>` revokes one. */
export const REGISTRY_PASSWORDS_PATH = "/auth/v1/registryPasswords";

/** The changes the audit log records, by fixed name (docs/audit-log.md). */
export const REGISTRY_PASSWORD_ACTIONS = { create: "auth.registry_password.create", revoke: "auth.registry_password.revoke" } as const;

const noStore = { "cache-control": "no-store", pragma: "no-cache" };
const ID = /^[0-9a-f]{16}$/;
/** A proto JSON Duration in whole seconds, as the API's other lifetimes (`"3600s"`). */
const SECONDS = /^(\d{1,12})s$/;

export interface RegistryPasswordRoutesOptions {
  config: ServerConfig;
  tokens: TokenService;
  db: Kysely<Database>;
  /** Where creations and revocations are recorded; by default nowhere. */
  audit?: AuditLog;
  now?: () => number;
}

/** A refused request: its HTTP status, gRPC code and message, written as a google.rpc.Status. */
class Refused extends Error {
  constructor(
    readonly status: number,
    readonly code: Code,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/**
 * A person's own registry passwords (docs/decisions.md, "A person's registry password"), as plain
 * HTTP routes on the API host beside the login routes. Each call carries the person's platform
 * token (`Authorization: Bearer`, audience the API, a person's, unrestricted) and reaches only that
 * person's identity's passwords. `POST` answers `{id, username, password, description, createTime,
 * expireTime?}` (the password only then), `GET` `{registryPasswords: [...]}` without secrets,
 * `DELETE .../<id>` `{}` (404 for an id the person does not hold). Creations and revocations by a
 * verified person are lines of the audit log. Resolves false for any other path.
 */
export function createRegistryPasswordRoutes(options: RegistryPasswordRoutesOptions) {
  const { config, tokens, db, audit } = options;
  const now = options.now ?? Date.now;
  const domain = errorDomainOf(config);

  return async (req: NodeRequest, res: NodeResponse): Promise<boolean> => {
    const path = (req.url ?? "").split("?", 1)[0];
    const id = path.startsWith(`${REGISTRY_PASSWORDS_PATH}/`) ? path.slice(REGISTRY_PASSWORDS_PATH.length + 1) : undefined;
    if (path !== REGISTRY_PASSWORDS_PATH && id === undefined) return false;
    const allowed = id === undefined ? "GET,POST" : "DELETE";
    let change: { action: string; resource: string } | undefined;
    let subject: string | undefined;
    try {
      if (!allowed.split(",").includes(req.method ?? "")) {
        throw new Refused(405, Code.Unimplemented, `Method ${req.method} is not allowed on ${path}`, { allow: allowed });
      }
      subject = await personCalling(req);
      if (id !== undefined) {
        change = { action: REGISTRY_PASSWORD_ACTIONS.revoke, resource: id };
        if (!ID.test(id) || !(await revokeRegistryPassword(db, subject, id))) throw new Refused(404, Code.NotFound, `you hold no registry password ${id.slice(0, 64)}`);
        writeJson(res, 200, "{}", noStore);
      } else if (req.method === "POST") {
        change = { action: REGISTRY_PASSWORD_ACTIONS.create, resource: "" };
        const request = await createRequestOf(req);
        const made = await createRegistryPassword(db, { identityUid: subject, ...request }, now());
        if ("tooMany" in made) {
          throw new Refused(429, Code.ResourceExhausted, `you hold ${made.tooMany} registry passwords, the most allowed (${MAX_REGISTRY_PASSWORDS}): revoke one first`);
        }
        change.resource = made.made.id;
        writeJson(res, 200, JSON.stringify({ ...answerOf(made.made), password: made.password }), noStore);
      } else {
        writeJson(res, 200, JSON.stringify({ registryPasswords: (await listRegistryPasswords(db, subject, now())).map(answerOf) }), noStore);
      }
      record(req, change, subject, "OK");
    } catch (error) {
      if (error instanceof Refused) {
        record(req, change, subject, codeName(error.code));
        sendStatus(res, error.status, { code: error.code, message: error.message }, domain, { ...noStore, ...error.headers });
      } else if (isUnavailable(error)) {
        record(req, change, subject, codeName(Code.Unavailable));
        sendStatus(res, 503, { code: Code.Unavailable, message: "the database is busy or unreachable; retry" }, domain, { ...noStore, "retry-after": "1" });
      } else {
        record(req, change, subject, codeName(Code.Internal));
        throw error;
      }
    }
    return true;
  };

  /** A change asked by a verified person, as one line of the audit log. */
  function record(req: NodeRequest, change: { action: string; resource: string } | undefined, subject: string | undefined, outcome: string): void {
    if (audit && change && subject !== undefined) audit.write({ host: "api", ...change, outcome, actor: { subject }, requestId: requestIdOf(req) });
  }

  /** The identity of the person whose platform token the request carries; throws 401 or 403 otherwise. */
  async function personCalling(req: NodeRequest): Promise<string> {
    const header = req.headers.authorization;
    const presented = bearerToken(header);
    const challenge = (message: string) => ({ "www-authenticate": bearerChallenge(config.apiUrl, typeof header === "string" ? header : undefined, message) });
    if (presented === undefined) {
      const message = "Unauthenticated: the request needs `Authorization: Bearer <token>` of the signed-in person";
      throw new Refused(401, Code.Unauthenticated, message, challenge(message));
    }
    let claims;
    try {
      claims = await tokens.verify(presented, config.apiUrl);
    } catch (error) {
      const message = `Unauthenticated: ${(error as Error).message}`;
      throw new Refused(401, Code.Unauthenticated, message, challenge(message));
    }
    if (personOf(claims) === undefined) throw new Refused(403, Code.PermissionDenied, "only a person signed in (platform-api login) holds registry passwords");
    if (restrictionOf(claims) !== undefined) throw new Refused(403, Code.PermissionDenied, "a restricted token cannot manage registry passwords: they grant all the person may pull and push");
    return claims.sub;
  }

  /** `{ttl?: "<seconds>s", description?: string}` as JSON; an empty body asks for a password that never expires. */
  async function createRequestOf(req: NodeRequest): Promise<{ description: string; ttlMs?: number }> {
    let body: Buffer;
    try {
      body = await readBody(req, config.limits.maxBodyBytes);
    } catch (error) {
      if (error instanceof BodyRefusedError) throw new Refused(error.reason === "too-large" ? 413 : 400, Code.InvalidArgument, "the request body was refused");
      throw error;
    }
    let fields: unknown = {};
    if (body.byteLength > 0) {
      try {
        fields = JSON.parse(body.toString("utf8"));
      } catch {
        throw new Refused(400, Code.InvalidArgument, "the body must be JSON: {\"ttl\": \"3600s\", \"description\": \"...\"}");
      }
    }
    if (fields === null || typeof fields !== "object" || Array.isArray(fields)) throw new Refused(400, Code.InvalidArgument, "the body must be a JSON object");
    const { ttl, description = "" } = fields as Record<string, unknown>;
    if (typeof description !== "string" || description.length > MAX_REGISTRY_PASSWORD_DESCRIPTION) {
      throw new Refused(400, Code.InvalidArgument, `description must be a string of at most ${MAX_REGISTRY_PASSWORD_DESCRIPTION} characters`);
    }
    if (ttl === undefined || ttl === "") return { description };
    const seconds = typeof ttl === "string" ? SECONDS.exec(ttl) : null;
    const ttlMs = seconds ? Number(seconds[1]) * 1000 : NaN;
    if (!(ttlMs >= MIN_REGISTRY_PASSWORD_TTL_MS && ttlMs <= MAX_REGISTRY_PASSWORD_TTL_MS)) {
      throw new Refused(400, Code.InvalidArgument, `ttl must be whole seconds ("3600s") from ${MIN_REGISTRY_PASSWORD_TTL_MS / 1000}s to ${MAX_REGISTRY_PASSWORD_TTL_MS / 1000}s, or absent for no expiry`);
    }
    return { description, ttlMs };
  }
}

/** A registry password as answered: `username` is what the registry host's `/token` takes with it. */
function answerOf(password: RegistryPassword) {
  const iso = (ms: number) => new Date(ms).toISOString();
  return {
    id: password.id,
    username: password.identityUid,
    description: password.description,
    createTime: iso(password.createTime),
    ...(password.expireTime === undefined ? {} : { expireTime: iso(password.expireTime) }),
    ...(password.lastUsedTime === undefined ? {} : { lastUsedTime: iso(password.lastUsedTime) }),
  };
}
