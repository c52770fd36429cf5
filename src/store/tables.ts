/**
 * The store's own tables, and the conventions of every table: times are integer epoch
 * milliseconds and booleans 0/1, so rows read back the same on SQLite and PostgreSQL; uid and name
 * columns use byte-order collation, which the uidp prefix ranges rely on. The domains' tables
 * join these in src/domains/kit/schema.ts.
 */

export interface SigningKeyTable {
  kid: string;
  algorithm: string;
  /** JSON text of the private JWK. */
  private_jwk: string;
  /** JSON text of the public JWK. */
  public_jwk: string;
  create_time: number;
  /** When the key starts signing (epoch ms); before that it only verifies (it is published). */
  activate_time: number;
}

export interface ServerSecretTable {
  name: string;
  /** base64url. */
  value: string;
  create_time: number;
}

/** A background job's lease (src/domains/kit/jobs/lease.ts): one holder at a time over every process on the database. */
export interface JobLeaseTable {
  /** The job's name (`retention`, `advisory-feed`). */
  job: string;
  /** What of the job is leased (a feed's URL); "" for a job with one lease. */
  key: string;
  /** "" when nobody holds it. */
  holder: string;
  /** Epoch ms; past it the lease may be taken over. */
  lease_until: number;
}

/** The server's own tables, beside every domain's. */
export interface SystemTables {
  signing_keys: SigningKeyTable;
  server_secrets: ServerSecretTable;
  job_leases: JobLeaseTable;
}
