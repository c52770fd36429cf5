import { execFile, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

/**
 * `buf curl` from the @bufbuild/buf devDependency (offline): it resolves schemas with Go's
 * protodesc through server reflection, a stricter and independent reader of what we serve.
 */
const BUF = fileURLToPath(new URL("../../node_modules/.bin/buf", import.meta.url));

/** Whether `buf curl` runs on this machine; tests skip with this reason when it does not. */
export const bufCurlSkip: string | false = spawnSync(BUF, ["curl", "--help"]).status === 0 ? false : "buf curl is not runnable";

const run = promisify(execFile);

/** `buf curl --http2-prior-knowledge <args>`: its standard output. Rejects on a non-zero exit. */
export async function bufCurl(...args: string[]): Promise<string> {
  return (await run(BUF, ["curl", "--http2-prior-knowledge", ...args], { encoding: "utf8", timeout: 30_000 })).stdout;
}
