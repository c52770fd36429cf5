// Copies the third-party .proto files our protos import (and the gRPC health and reflection
// protos we serve) from node_modules into proto-deps/, a git-ignored buf module that is never
// linted. Run as the first step of `npm run generate`.
import { cpSync, mkdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const root = join(dirname(new URL(import.meta.url).pathname), "..");
const out = join(root, "proto-deps");
const pkgDir = (name) => dirname(require.resolve(`${name}/package.json`));

/** [package, path inside the package, path inside proto-deps] */
const files = [
  ["google-proto-files", "google/api/annotations.proto", "google/api/annotations.proto"],
  ["google-proto-files", "google/api/http.proto", "google/api/http.proto"],
  ["google-proto-files", "google/api/field_behavior.proto", "google/api/field_behavior.proto"],
  ["google-proto-files", "google/rpc/status.proto", "google/rpc/status.proto"],
  ["google-proto-files", "google/rpc/error_details.proto", "google/rpc/error_details.proto"],
  ["google-proto-files", "google/rpc/code.proto", "google/rpc/code.proto"],
  ["grpc-health-check", "proto/health/v1/health.proto", "grpc/health/v1/health.proto"],
  ["@grpc/reflection", "build/proto/grpc/reflection/v1/reflection.proto", "grpc/reflection/v1/reflection.proto"],
  ["@grpc/reflection", "build/proto/grpc/reflection/v1alpha/reflection.proto", "grpc/reflection/v1alpha/reflection.proto"],
];

rmSync(out, { recursive: true, force: true });
for (const [pkg, from, to] of files) {
  mkdirSync(dirname(join(out, to)), { recursive: true });
  cpSync(join(pkgDir(pkg), from), join(out, to));
}
