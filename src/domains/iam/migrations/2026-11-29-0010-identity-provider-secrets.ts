import type { Kysely, Migration } from "kysely";
import { createSecretBox, isSealed, newSecretsKey, SECRETS_KEY_NAME } from "../../../store/secret-box.js";
import { serverSecret } from "../../../store/server-keys.js";

/**
 * Frozen: identity providers get `pkce_enabled` (a public client, no secret), and the client
 * secrets stored in clear until now are sealed under the server's secrets key.
 */
export const identityProviderSecrets: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable("identity_providers").addColumn("pkce_enabled", "integer", (c) => c.notNull().defaultTo(0)).execute();
    const rows = (await db.selectFrom("identity_providers").select(["uid", "client_secret"]).execute()) as Array<{ uid: string; client_secret: string }>;
    const clear = rows.filter((row) => !isSealed(row.client_secret));
    if (clear.length === 0) return;
    const box = createSecretBox(Buffer.from(await serverSecret(db, SECRETS_KEY_NAME, newSecretsKey, Date.now()), "base64url"));
    for (const row of clear) await db.updateTable("identity_providers").set({ client_secret: box.seal(row.client_secret) }).where("uid", "=", row.uid).execute();
  },
};
