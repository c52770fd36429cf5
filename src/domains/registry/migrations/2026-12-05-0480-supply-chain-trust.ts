import type { Kysely, Migration } from "kysely";
import { binaryCollation, bytesType, dialectOfDb } from "../../../store/dialect.js";

/** Frozen: trusted keys and trust policies of groups, signatures read from signature manifests, and their verifications. */
export const supplyChainTrust: Migration = {
  async up(db: Kysely<any>) {
    const binary = binaryCollation(dialectOfDb(db));
    await db.schema
      .createTable("trusted_keys")
      .addColumn("uid", "text", (c) => c.primaryKey().modifyEnd(binary))
      .addColumn("group_uid", "text", (c) => c.notNull().modifyEnd(binary))
      .addColumn("name", "text", (c) => c.notNull().modifyEnd(binary))
      .addColumn("description", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("public_key_pem", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("algorithm", "text", (c) => c.notNull())
      .addColumn("fingerprint", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("keyless_issuer", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("keyless_subject", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("create_time", "bigint", (c) => c.notNull())
      .addColumn("update_time", "bigint", (c) => c.notNull())
      .addUniqueConstraint("trusted_keys_name", ["group_uid", "name"])
      .execute();
    await db.schema.createIndex("trusted_keys_group").on("trusted_keys").columns(["group_uid", "fingerprint"]).execute();
    await db.schema
      .createTable("trust_policies")
      .addColumn("group_uid", "text", (c) => c.primaryKey().modifyEnd(binary))
      .addColumn("mode", "text", (c) => c.notNull())
      .addColumn("exempt_repos", "text", (c) => c.notNull().defaultTo("[]"))
      .addColumn("update_time", "bigint", (c) => c.notNull())
      .execute();
    await db.schema
      .createTable("signatures")
      .addColumn("repo_uid", "text", (c) => c.notNull().modifyEnd(binary))
      .addColumn("manifest_digest", "text", (c) => c.notNull().modifyEnd(binary))
      .addColumn("layer", "integer", (c) => c.notNull())
      .addColumn("subject_digest", "text", (c) => c.notNull().modifyEnd(binary))
      .addColumn("kind", "text", (c) => c.notNull())
      .addColumn("payload", bytesType(dialectOfDb(db)), (c) => c.notNull())
      .addColumn("payload_type", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("signatures", "text", (c) => c.notNull())
      .addColumn("create_time", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("signatures_pk", ["repo_uid", "manifest_digest", "layer"])
      .execute();
    await db.schema
      .createTable("signature_verifications")
      .addColumn("repo_uid", "text", (c) => c.notNull().modifyEnd(binary))
      .addColumn("manifest_digest", "text", (c) => c.notNull().modifyEnd(binary))
      .addColumn("layer", "integer", (c) => c.notNull())
      .addColumn("key_uid", "text", (c) => c.notNull().modifyEnd(binary))
      .addColumn("subject_digest", "text", (c) => c.notNull().modifyEnd(binary))
      .addColumn("kind", "text", (c) => c.notNull())
      .addColumn("predicate_type", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("verify_time", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("signature_verifications_pk", ["repo_uid", "manifest_digest", "layer", "key_uid"])
      .execute();
    await db.schema.createIndex("signature_verifications_subject").on("signature_verifications").columns(["repo_uid", "subject_digest"]).execute();
    await db.schema.createIndex("signature_verifications_key").on("signature_verifications").column("key_uid").execute();
  },
};
