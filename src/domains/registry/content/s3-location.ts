/** Where an S3 content store keeps its objects: `s3://<bucket>[/<prefix>]` (this module loads no SDK). */
export interface S3Location {
  bucket: string;
  /** "" or a prefix ending with "/". */
  prefix: string;
}

/** The bucket does not answer (unreachable, unknown, or the credentials are refused). */
export class StorageUnavailable extends Error {}

/** An S3 URL is not `s3://<bucket>[/<prefix>]` with a valid bucket name. */
export class InvalidStorageUrl extends Error {}

/** Parses `s3://<bucket>[/<prefix>]`; throws InvalidStorageUrl. */
export function parseS3Url(text: string): S3Location {
  const match = /^s3:\/\/([^/?#]+)(?:\/([^?#]*))?$/.exec(text);
  if (!match) throw new InvalidStorageUrl(`"${text}" is not s3://<bucket>[/<prefix>]`);
  const [, bucket, path = ""] = match;
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) throw new InvalidStorageUrl(`"${bucket}" is not an S3 bucket name (3 to 63 lowercase letters, digits, dots and hyphens)`);
  const prefix = path.replace(/^\/+|\/+$/g, "");
  if (prefix.split("/").some((segment) => segment === "." || segment === "..")) throw new InvalidStorageUrl(`the prefix "${prefix}" may not hold . or .. segments`);
  return { bucket, prefix: prefix === "" ? "" : `${prefix}/` };
}
