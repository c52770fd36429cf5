import type { Kysely, Migration } from "kysely";

/** Frozen: the capability names this server shipped first, and the hosted service's name for each. */
const RENAMED: ReadonlyArray<readonly [string, string]> = [
  ["CAP_IAM_IDENTITIES_LIST", "CAP_IAM_IDENTITY_LIST"],
  ["CAP_IAM_IDENTITIES_CREATE", "CAP_IAM_IDENTITY_CREATE"],
  ["CAP_IAM_IDENTITIES_UPDATE", "CAP_IAM_IDENTITY_UPDATE"],
  ["CAP_IAM_IDENTITIES_DELETE", "CAP_IAM_IDENTITY_DELETE"],
  ["CAP_IAM_TERMS_LIST", "CAP_TERMS_LIST"],
  ["CAP_IAM_TERMS_ACCEPT", "CAP_TERMS_ACCEPT"],
  ["CAP_EVENTS_SUBSCRIPTIONS_LIST", "CAP_EVENTS_SUBSCRIPTION_LIST"],
  ["CAP_EVENTS_SUBSCRIPTIONS_CREATE", "CAP_EVENTS_SUBSCRIPTION_CREATE"],
  ["CAP_EVENTS_SUBSCRIPTIONS_DELETE", "CAP_EVENTS_SUBSCRIPTION_DELETE"],
];

/**
 * Frozen: stored role capabilities take the hosted service's names (the enum
 * keeps the old ones as aliases for JSON input only). A role already holding
 * the new name just loses the old row.
 */
export const hostedCapabilityNames: Migration = {
  async up(db: Kysely<any>) {
    for (const [from, to] of RENAMED) {
      await db
        .deleteFrom("role_capabilities")
        .where("capability", "=", from)
        .where("role_uid", "in", (eb: any) => eb.selectFrom("role_capabilities").select("role_uid").where("capability", "=", to))
        .execute();
      await db.updateTable("role_capabilities").set({ capability: to }).where("capability", "=", from).execute();
    }
  },
};
