// Fails when `npm run generate` changes gen/: the committed generated code must match proto/.
import { execSync } from "node:child_process";

const status = () => execSync("git status --porcelain --untracked-files=all -- gen", { encoding: "utf8" });
const before = status();
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
process.stdout.write("gen/ is current\n");
