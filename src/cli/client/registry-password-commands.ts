import { parseDuration, UsageError, type Options } from "../../command/options.js";
import { apiUrlOf } from "./api-url.js";
import { authorizedFetch } from "./authorized-fetch.js";
import { okJson } from "./http.js";

/** The routes of the signed-in person's registry passwords on the API host. */
const REGISTRY_PASSWORDS = "/auth/v1/registryPasswords";
const ID = /^[0-9a-f]{16}$/;

/** A registry password as the API answers it (`password` only when it was just made). */
interface RegistryPassword {
  id: string;
  username: string;
  password?: string;
  description: string;
  createTime: string;
  expireTime?: string;
  lastUsedTime?: string;
}

/**
 * `platform-api auth registry-password create|list|revoke <id>`: the signed-in person's registry
 * passwords. `create` prints `{username, password, id, expireTime}` as JSON (the password this once)
 * and how to log in with them on stderr; `list` prints `{registryPasswords: [...]}` without secrets;
 * `revoke` prints nothing, and says on stderr what it revoked.
 */
export async function registryPassword(options: Options, operands: string[]): Promise<void> {
  const [verb, ...rest] = operands;
  if (verb === "create" && rest.length === 0) return create(options);
  if (verb === "list" && rest.length === 0) return list(options);
  if (verb === "revoke" && rest.length === 1) return revoke(options, rest[0]);
  throw new UsageError(
    verb === "revoke" ? "auth registry-password revoke takes the id of one registry password (auth registry-password list shows them)" : "auth registry-password needs create, list or revoke <id>",
  );
}

async function create(options: Options): Promise<void> {
  let ttl = "";
  if (typeof options.ttl === "string" && options.ttl !== "") {
    try {
      ttl = `${parseDuration(options.ttl)}s`;
    } catch (error) {
      throw new UsageError(`--ttl: ${(error as Error).message}`);
    }
  }
  const api = await apiUrlOf(options["api-url"]);
  const authorized = await authorizedFetch(api);
  const body = JSON.stringify({ ...(ttl === "" ? {} : { ttl }), description: typeof options.description === "string" ? options.description : "" });
  const made = (await okJson(api, await authorized(REGISTRY_PASSWORDS, { method: "POST", headers: { "content-type": "application/json" }, body }))) as RegistryPassword;
  const shown = { username: made.username, password: made.password, id: made.id, expireTime: made.expireTime ?? null };
  process.stdout.write(`${JSON.stringify(shown, null, 2)}\n`);
  const until = made.expireTime === undefined ? "until revoked" : `until ${made.expireTime} or revoked`;
  process.stderr.write(`Log in to the registry with: docker login <registry host> --username '${made.username}' --password-stdin (the password above; shown only now, valid ${until})\n`);
}

async function list(options: Options): Promise<void> {
  const api = await apiUrlOf(options["api-url"]);
  const authorized = await authorizedFetch(api);
  const listed = (await okJson(api, await authorized(REGISTRY_PASSWORDS))) as { registryPasswords?: RegistryPassword[] };
  process.stdout.write(`${JSON.stringify({ registryPasswords: listed.registryPasswords ?? [] }, null, 2)}\n`);
}

async function revoke(options: Options, id: string): Promise<void> {
  if (!ID.test(id)) throw new UsageError(`"${id.slice(0, 64)}" is not the id of a registry password (16 hex digits, as auth registry-password list shows)`);
  const api = await apiUrlOf(options["api-url"]);
  const authorized = await authorizedFetch(api);
  await okJson(api, await authorized(`${REGISTRY_PASSWORDS}/${id}`, { method: "DELETE" }));
  process.stderr.write(`Revoked registry password ${id}\n`);
}
