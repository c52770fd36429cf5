import type { ContentStore } from "./content-store.js";
import { createFileContentStore } from "./content-store.js";
import { parseS3Url } from "./s3-location.js";

/**
 * The registry's content store: the S3 bucket `storage` names (`s3://<bucket>[/<prefix>]`), or,
 * when `storage` is empty or absent, the folder `dir`. The S3 SDK is loaded only for a bucket.
 * With `checked`, a bucket must answer first (StorageUnavailable otherwise). Throws
 * InvalidStorageUrl for a `storage` that is not an S3 URL.
 */
export async function openContentStore(options: { storage?: string; dir: string; checked?: boolean }): Promise<ContentStore> {
  if (options.storage === undefined || options.storage === "") return createFileContentStore(options.dir);
  const location = parseS3Url(options.storage);
  const { createS3ContentStore } = await import("./s3-content-store.js");
  const store = createS3ContentStore(location);
  if (options.checked) await store.checkReachable();
  return store;
}
