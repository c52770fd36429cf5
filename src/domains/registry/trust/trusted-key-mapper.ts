import { create } from "@bufbuild/protobuf";
import { KeylessIdentitySchema, TrustedKeySchema, type TrustedKey } from "../../../../gen/platform/registry/v2/trusted_key_pb.js";
import { toTimestamp } from "../../../aip/time.js";
import type { TrustedKeyRow } from "./store/trusted-keys.js";

export function trustedKeyFromRow(row: TrustedKeyRow): TrustedKey {
  return create(TrustedKeySchema, {
    uid: row.uid,
    name: row.name,
    description: row.description,
    publicKeyPem: row.public_key_pem,
    algorithm: row.algorithm,
    fingerprint: row.fingerprint,
    keyless: row.algorithm === "keyless" ? create(KeylessIdentitySchema, { issuer: row.keyless_issuer, subjectPattern: row.keyless_subject }) : undefined,
    createTime: toTimestamp(row.create_time),
    updateTime: toTimestamp(row.update_time),
  });
}
