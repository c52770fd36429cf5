// Loaded with `--import` after tsx: the bench measures the server as `serve` runs it, compiled by tsc
// into dist/, not as tsx transpiles src/ on the fly (esbuild's keepNames wraps every named closure
// in a `__name` call, 10% of a REST call's CPU). Builds dist/ first when a source is newer, then
// resolves every import of a file under src/ or gen/ to its compiled twin under dist/. The bench's
// own files stay TypeScript, typed against src/.
import { register } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import { buildIfStale } from "../scripts/build-if-stale.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const cwd = process.cwd();
process.chdir(root);
buildIfStale();
process.chdir(cwd);

register("./compiled-sources-hooks.mjs", import.meta.url, { data: { root: pathToFileURL(root).href } });
