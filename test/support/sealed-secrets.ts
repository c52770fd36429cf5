import type { Kysely } from "kysely";
import type { Database } from "../../src/domains/kit/schema.js";
import { createSecretBox, SECRETS_KEY_NAME } from "../../src/store/secret-box.js";

/** A secret as the server stores it (sealed), opened with that server's secrets key. */
export async function openStoredSecret(db: Kysely<Database>, stored: string): Promise<string> {
  const { value } = await db.selectFrom("server_secrets").select("value").where("name", "=", SECRETS_KEY_NAME).executeTakeFirstOrThrow();
  return createSecretBox(Buffer.from(value, "base64url")).open(stored);
}
