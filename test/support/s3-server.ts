import { mkdtempSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import S3rver from "s3rver";
import { S3Client } from "@aws-sdk/client-s3";

/**
 * A real S3-compatible server for tests: s3rver (npm), on a free loopback port, its objects in a
 * temporary folder, with one bucket. `env` holds the standard AWS variables that point a client
 * (or a `platform-api` child process) at it.
 */
export interface TestS3 {
  bucket: string;
  endpoint: string;
  env: Record<string, string>;
  /** A client with the settings `s3ClientFromEnvironment` derives from `env`. */
  client(): S3Client;
  close(): Promise<void>;
}

export async function startS3Server(bucket = "registry"): Promise<TestS3> {
  const directory = mkdtempSync(join(tmpdir(), "platform-api-s3-"));
  const server = new S3rver({ port: 0, address: "127.0.0.1", silent: true, directory, configureBuckets: [{ name: bucket, configs: [] }] });
  const address = (await server.run()) as AddressInfo;
  const endpoint = `http://127.0.0.1:${address.port}`;
  // s3rver's fixed credentials.
  const env = {
    AWS_ENDPOINT_URL_S3: endpoint,
    AWS_ACCESS_KEY_ID: "S3RVER",
    AWS_SECRET_ACCESS_KEY: "S3RVER",
    AWS_REGION: "us-east-1",
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
  };
  return {
    bucket,
    endpoint,
    env,
    client: () =>
      new S3Client({
        region: env.AWS_REGION,
        endpoint,
        forcePathStyle: true,
        credentials: { accessKeyId: env.AWS_ACCESS_KEY_ID, secretAccessKey: env.AWS_SECRET_ACCESS_KEY },
        requestChecksumCalculation: "WHEN_REQUIRED",
        responseChecksumValidation: "WHEN_REQUIRED",
      }),
    async close() {
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
