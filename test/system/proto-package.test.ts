import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { promisify } from "node:util";
import { after, test } from "node:test";
import { createFileRegistry, fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { API_SERVICES } from "../../src/server/domains.js";
import { inRepo, ROOT } from "../support/repo.js";

/**
 * `npm run pack:protos` makes a tarball another repo can use: unpacked anywhere, with nothing
 * else, it is a buf module that builds (every served service in it), lints, and generates code.
 */
const run = promisify(execFile);
const BUF_DIR = inRepo("node_modules/.bin");
const BUF = join(BUF_DIR, "buf");
const dir = mkdtempSync(join(tmpdir(), "platform-api-protos-test-"));
after(() => rmSync(dir, { recursive: true, force: true }));

test("the protos package is a self-contained buf module with every served service", { timeout: 180_000 }, async () => {
  const { stdout } = await run(process.execPath, [inRepo("scripts/pack-protos.mjs"), dir], { cwd: ROOT });
  const tarball = stdout.trim().split("\n").pop()!;
  assert.match(tarball, /platform-api-protos-\d+\.\d+\.\d+\.tgz$/);
  await run("tar", ["xzf", tarball, "-C", dir]);
  const module = join(dir, "package");

  const image = await run(BUF, ["build", module, "-o", "-"], { encoding: "buffer", maxBuffer: 64 * 1024 * 1024 });
  const registry = createFileRegistry(fromBinary(FileDescriptorSetSchema, image.stdout));
  for (const service of API_SERVICES) assert.ok(registry.getService(service.typeName), service.typeName);
  assert.ok(registry.getMessage("google.rpc.ErrorInfo"));

  await run(BUF, ["lint", module]);

  const template = JSON.stringify({ version: "v2", plugins: [{ local: "protoc-gen-es", out: join(dir, "gen"), opt: ["target=ts"] }] });
  await run(BUF, ["generate", module, "--template", template], { env: { ...process.env, PATH: `${BUF_DIR}${delimiter}${process.env.PATH}` } });
  assert.ok(existsSync(join(dir, "gen/platform/iam/v2/groups_service_pb.ts")));
});
