// Runs several compiled test files in one process, one after another: what the entry modules that
// scripts/test-processes.mjs writes under dist/test/groups/ call. Each file's tests are reported
// inside a suite named after the file's source (test/unit/x.test.ts), so the spec reporter names
// the file of every test, and a file that fails to load fails its suite and the run.
import { after, describe } from "node:test";

/**
 * Imports each file inside a suite named after its source, the next only once the previous
 * suite, its tests and its `after` hooks, has finished: no two files' module code or tests overlap.
 * The files' tests join their suite through the async context the import starts in, so the wait
 * happens here, outside any suite, never inside the suite's own function.
 * @param {ReadonlyArray<readonly [name: string, url: string]>} files
 */
export async function runInOneProcess(files) {
  for (const [name, url] of files) {
    let finished = () => {};
    const done = new Promise((resolve) => (finished = resolve));
    describe(name, async () => {
      try {
        await import(url);
      } finally {
        after(() => finished());
      }
    });
    await done;
  }
}
