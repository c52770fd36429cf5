import { execFile, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { create, fromBinary, toBinary, type JsonObject } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema, FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { inRepo } from "./repo.js";

/**
 * `buf curl` from the @bufbuild/buf devDependency (offline): it resolves schemas with Go's
 * protodesc through server reflection, a stricter and independent reader of what we serve.
 */
const BUF = inRepo("node_modules/.bin/buf");

/** Whether `buf curl` runs on this machine; tests skip with this reason when it does not. */
export const bufCurlSkip: string | false = spawnSync(BUF, ["curl", "--help"]).status === 0 ? false : "buf curl is not runnable";

const run = promisify(execFile);

/** `buf curl --http2-prior-knowledge <args>`: its standard output. Rejects on a non-zero exit. */
export async function bufCurl(...args: string[]): Promise<string> {
  return (await run(BUF, ["curl", "--http2-prior-knowledge", ...args], { encoding: "utf8", timeout: 30_000 })).stdout;
}

/** What `buf curl` prints for a failed call: the Connect JSON error, each detail as base64. */
export interface BufCurlError {
  code: string;
  message: string;
  details: { type: string; value: string }[];
}

/** `buf curl --http2-prior-knowledge <args>` of a call that fails: the error it prints. Rejects if the call succeeds. */
export async function bufCurlError(...args: string[]): Promise<BufCurlError> {
  try {
    await bufCurl(...args);
  } catch (error) {
    return JSON.parse((error as { stderr: string }).stderr) as BufCurlError;
  }
  throw new Error("the call succeeded");
}

/**
 * An error detail decoded by buf alone, with the schema the server's reflection serves: `buf curl`
 * asks ServerReflectionInfo `file_containing_symbol` for the detail's type, the files it answers
 * (the type's file and its imports) become a FileDescriptorSet, and `buf convert` prints the
 * value as JSON. (`buf curl` prints details as base64: it decodes only types compiled into buf.)
 */
export async function bufDecodeDetail(apiUrl: string, detail: { type: string; value: string }): Promise<JsonObject> {
  const answer = JSON.parse(await bufCurl("--protocol", "grpc", "-d", JSON.stringify({ fileContainingSymbol: detail.type }), `${apiUrl}/grpc.reflection.v1.ServerReflection/ServerReflectionInfo`)) as {
    fileDescriptorResponse?: { fileDescriptorProto: string[] };
  };
  const file = (answer.fileDescriptorResponse?.fileDescriptorProto ?? []).map((b64) => fromBinary(FileDescriptorProtoSchema, Buffer.from(b64, "base64")));
  const folder = mkdtempSync(join(tmpdir(), "buf-detail-"));
  try {
    writeFileSync(join(folder, "schema.binpb"), toBinary(FileDescriptorSetSchema, create(FileDescriptorSetSchema, { file })));
    // Go's encoding omits base64 padding.
    writeFileSync(join(folder, "value.binpb"), Buffer.from(detail.value, "base64"));
    const { stdout } = await run(BUF, ["convert", join(folder, "schema.binpb"), "--type", detail.type, "--from", join(folder, "value.binpb"), "--to", "-#format=json"], {
      encoding: "utf8",
      timeout: 30_000,
    });
    return JSON.parse(stdout) as JsonObject;
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
