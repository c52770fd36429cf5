import { parseDuration, UsageError, type Options } from "../../command/options.js";
import { apiUrlOf } from "./api-url.js";
import { authorizedFetch } from "./authorized-fetch.js";
import { okJson } from "./http.js";

/**
 * `platform-api pull-token create --group <uid> [--ttl 720h] [--name n] [--role uid]`:
 * CreatePullToken over REST as the signed-in person; prints the credentials as JSON on stdout and
 * how to log in with them on stderr.
 */
export async function createPullToken(options: Options): Promise<void> {
  const group = options.group;
  if (typeof group !== "string" || group === "") throw new UsageError("pull-token create needs --group <uid>");
  let ttlSeconds: number;
  try {
    ttlSeconds = parseDuration(options.ttl as string);
  } catch (error) {
    throw new UsageError(`--ttl: ${(error as Error).message}`);
  }
  const api = await apiUrlOf(options["api-url"]);
  const authorized = await authorizedFetch(api);
  const body = JSON.stringify({ ttl: `${ttlSeconds}s`, name: options.name ?? "", roleUid: options.role ?? "" });
  const response = await authorized(`/iam/v2/pullTokens/${group}`, { method: "POST", headers: { "content-type": "application/json" }, body });
  const made = (await okJson(api, response)) as { username: string; expireTime: string };
  process.stdout.write(`${JSON.stringify(made, null, 2)}\n`);
  process.stderr.write(`Log in to the registry with: docker login <registry host> --username '${made.username}' --password-stdin (the password above; shown only now, valid until ${made.expireTime})\n`);
}
