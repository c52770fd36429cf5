// A scan thread (the module `createScanThreads` starts each thread with): works the `layer` and
// `packages` tasks of scan-tasks.ts, with the readers this thread would otherwise run on the server's
// event loop.
import { Readable } from "node:stream";
import { packagesOfImage, type AttachedSbom } from "./image.js";
import { readLayerBytes } from "./layers.js";
import { bufferOf, PACKAGES_PER_BATCH, sharedCopy, type LayerInput, type LayerTask, type LayerTaskResult, type PackagesInput, type PackagesTask, type PackagesTaskResult, type TaskOutput } from "./scan-tasks.js";
import { serveTasks, type TaskPort, type TaskResult } from "./thread-tasks.js";

const PULL: TaskOutput = { pull: true };

async function readLayer(task: LayerTask, port: TaskPort): Promise<TaskResult> {
  const source = new Readable({
    highWaterMark: 4 * 1024 * 1024,
    read() {
      port.send(PULL);
      void port.receive().then((received) => {
        const input = received as LayerInput;
        if ("chunk" in input) this.push(bufferOf(input.chunk));
        else if ("end" in input) this.push(null);
        else this.destroy(new Error(input.error));
      });
    },
  });
  const read = await readLayerBytes(source, task.digest, task.limits, task.limit);
  source.destroy();
  if ("error" in read.outcome) return { result: { error: read.outcome.error.message, overBudget: read.overBudget } satisfies LayerTaskResult };
  const { removed, opaque } = read.outcome.changes;
  const written = [...read.outcome.changes.written].map(([path, content]): [string, Uint8Array | null] => [path, content === null ? null : sharedCopy(content)]);
  return { result: { changes: { removed, opaque, written }, bytes: read.outcome.bytes, overBudget: false } satisfies LayerTaskResult };
}

async function packages(task: PackagesTask, port: TaskPort): Promise<TaskResult> {
  const files = new Map(task.files.map(([path, content]) => [path, bufferOf(content)]));
  const sboms = async function* (): AsyncGenerator<AttachedSbom> {
    for (;;) {
      port.send(PULL);
      const input = (await port.receive()) as PackagesInput;
      if ("end" in input) return;
      if ("error" in input) throw new Error(input.error);
      if ("sbom" in input) yield input.sbom;
    }
  };
  const inventory = await packagesOfImage(files, sboms());
  for (let at = 0; at < inventory.packages.length; at += PACKAGES_PER_BATCH) {
    port.send({ packages: inventory.packages.slice(at, at + PACKAGES_PER_BATCH) } satisfies TaskOutput);
    await port.receive();
  }
  return { result: (inventory.distro === undefined ? {} : { distro: inventory.distro }) satisfies PackagesTaskResult };
}

serveTasks(async (start, port) => {
  const task = start as LayerTask | PackagesTask;
  return task.kind === "layer" ? readLayer(task, port) : packages(task, port);
});
