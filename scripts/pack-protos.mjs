// `npm run pack:protos [-- <folder>]`: an npm tarball of proto/ with every third-party .proto it
// imports (google/api/*) plus google/rpc/status.proto and error_details.proto (the error model),
// and a buf.yaml that makes the package a buf module: other repos generate their clients from it
// (`buf generate node_modules/platform-api-protos`) without network or a schema registry.
// Writes platform-api-protos-<version>.tgz into <folder> (default .) and prints its path.
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";

const root = join(dirname(new URL(import.meta.url).pathname), "..");
const out = resolve(process.argv[2] ?? ".");
execFileSync(process.execPath, [join(root, "scripts/vendor-protos.mjs")], { stdio: "inherit" });

const stage = mkdtempSync(join(tmpdir(), "platform-api-protos-"));
const walk = (dir) => readdirSync(dir).flatMap((name) => (statSync(join(dir, name)).isDirectory() ? walk(join(dir, name)) : [join(dir, name)]));
const ours = walk(join(root, "proto")).filter((f) => f.endsWith(".proto")).map((f) => relative(join(root, "proto"), f));
for (const file of ours) {
  mkdirSync(dirname(join(stage, file)), { recursive: true });
  cpSync(join(root, "proto", file), join(stage, file));
}

// Third-party imports, transitively; google/protobuf/* ship with every protobuf compiler.
const wanted = ["google/rpc/status.proto", "google/rpc/error_details.proto"];
const imports = (path) => [...readFileSync(path, "utf8").matchAll(/^import\s+(?:public\s+|weak\s+)?"([^"]+)";/gm)].map((m) => m[1]);
const queue = [...ours.flatMap((f) => imports(join(root, "proto", f))), ...wanted];
const copied = new Set();
for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
  if (copied.has(file) || file.startsWith("google/protobuf/") || ours.includes(file)) continue;
  const source = join(root, "proto-deps", file);
  if (!existsSync(source)) throw new Error(`${file} is imported but not in proto-deps/ (scripts/vendor-protos.mjs)`);
  mkdirSync(dirname(join(stage, file)), { recursive: true });
  cpSync(source, join(stage, file));
  copied.add(file);
  queue.push(...imports(source));
}

const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
writeFileSync(
  join(stage, "package.json"),
  `${JSON.stringify({ name: "platform-api-protos", version, description: "The Platform API's protos (proto/ of platform-api) with the google/api and google/rpc files they use, as a buf module", files: ["**/*.proto", "buf.yaml", "README.md"] }, null, 2)}\n`,
);
// The v1 folders keep the hosted v1 names, as in the repo's buf.yaml (docs/decisions.md, "v1").
const v1Folders = [...new Set(ours.filter((f) => /^platform\/[^/]+\/v1\//.test(f) && !f.startsWith("platform/common/")).map((f) => dirname(f)))].sort();
const v1Exceptions = v1Folders.length === 0 ? [] : ["      ignore_only:", ...["SERVICE_SUFFIX", "RPC_REQUEST_STANDARD_NAME", "ENUM_VALUE_PREFIX", "ENUM_ZERO_VALUE_SUFFIX"].map((rule) => `        ${rule}: [${v1Folders.join(", ")}]`)];
writeFileSync(
  join(stage, "buf.yaml"),
  ["version: v2", "modules:", "  - path: .", "    lint:", "      use: [STANDARD]", "      except: [RPC_REQUEST_RESPONSE_UNIQUE, RPC_RESPONSE_STANDARD_NAME]", "      ignore: [google]", ...v1Exceptions, ""].join("\n"),
);
writeFileSync(
  join(stage, "README.md"),
  [
    "# platform-api-protos",
    "",
    "The Platform API's `.proto` files, with the third-party files they import (`google/api`, from",
    "googleapis, Apache-2.0, license headers kept) and the error model (`google/rpc/status.proto`,",
    "`error_details.proto`). The folder is a buf module (`buf.yaml`): generate clients with",
    "",
    "    npx buf generate node_modules/platform-api-protos --template buf.gen.yaml",
    "",
    "or list `node_modules/platform-api-protos` as a module of your buf workspace. protoc works too:",
    "`protoc -I node_modules/platform-api-protos ...`.",
    "",
  ].join("\n"),
);
mkdirSync(out, { recursive: true });
const name = execFileSync("npm", ["pack", "--silent", "--pack-destination", out], { cwd: stage, encoding: "utf8" }).trim().split("\n").pop();
rmSync(stage, { recursive: true, force: true });
process.stdout.write(`${join(out, name)}\n`);
