// Fails when `npm run generate` changes gen/: the committed generated code must match proto/.
// When it passes, gen/ is left as it was found, file times included (generating rewrites every
// file with the same bytes), so a build of the same sources is not taken for stale.
import { execSync } from "node:child_process";
import { readdirSync, statSync, utimesSync } from "node:fs";
import { join } from "node:path";

const status = () => execSync("git status --porcelain --untracked-files=all -- gen", { encoding: "utf8" });

/** Every file under `dir` with its access and modification times. */
function times(dir, into = new Map()) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) times(path, into);
    else if (entry.isFile()) {
      const { atime, mtime } = statSync(path);
      into.set(path, { atime, mtime });
    }
  }
  return into;
}

const before = status();
const found = times("gen");
execSync("npm run -s generate", { stdio: "inherit" });
const after = status();
if (before !== after) {
  process.stderr.write(`gen/ is stale: run \`npm run generate\` and commit the result.\n${after}`);
  process.exit(1);
}
if (after !== "") {
  process.stderr.write(`gen/ has uncommitted changes:\n${after}`);
  process.exit(1);
}
for (const [path, { atime, mtime }] of found) utimesSync(path, atime, mtime);
process.stdout.write("gen/ is current\n");
