import { PassThrough, type Writable } from "node:stream";
import type { Kysely } from "kysely";
import type { Database } from "../../kit/schema.js";
import type { ContentStore } from "../content/content-store.js";
import { digestAlgorithm, hashOf } from "../digests.js";
import { blobSizes, linkBlob, recordBlob } from "../store/blobs.js";
import { UpstreamFailure, type UpstreamClient } from "./upstream-client.js";

/**
 * Blobs brought in from an upstream, one fetch per digest at a time in this process (the single
 * flight): the fetch that starts it may stream the bytes to its client while they are written to
 * the content store; every other pull of the same digest waits for it and then reads the store. The
 * bytes are hashed on the way: a blob that does not hash to its digest is not stored (the content
 * store's `putStream` refuses it too), its live client is cut before the last bytes, and the
 * fetch fails; nothing of it is served again.
 */

/** The fetches under way in this process, by digest: each settles with the blob's size once stored. */
export type BlobFlights = Map<string, Promise<number>>;

export interface BlobFetch {
  db: Kysely<Database>;
  content: ContentStore;
  flights: BlobFlights;
  client: UpstreamClient;
  /** The repository path at the upstream. */
  remote: string;
  /** The repo the blob is linked into once stored. */
  repoUid: string;
  digest: string;
  maxBytes: number;
  now: () => number;
}

/** The size of blob `digest` when the registry holds it (recorded, and its bytes all in the content store), else undefined. */
export async function heldBlobSize(db: Kysely<Database>, content: ContentStore, digest: string): Promise<number | undefined> {
  const recorded = (await blobSizes(db, [digest])).get(digest);
  return recorded !== undefined && (await content.size(digest)) === recorded ? recorded : undefined;
}

/** Writes `chunk` to `out` unless it is gone; waits until it drains or closes. */
function writeOut(out: Writable, chunk: Buffer): Promise<void> {
  if (out.destroyed || out.writableEnded) return Promise.resolve();
  if (out.write(chunk)) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      out.off("drain", done);
      out.off("close", done);
      resolve();
    };
    out.once("drain", done);
    out.once("close", done);
  });
}

/** Fetches, verifies and stores the blob (see the module), streaming it to `live` (ended when it verifies, destroyed when not). */
async function fetchOnce(fetch: BlobFetch, live?: Writable): Promise<number> {
  const { client, remote, digest, content } = fetch;
  const answer = await client.blob(remote, digest);
  if (answer === undefined) throw new UpstreamFailure(`the upstream has no blob ${digest} in ${remote}`, 404);
  if (answer.size !== undefined && answer.size > fetch.maxBytes) {
    answer.body.destroy();
    throw new UpstreamFailure(`blob ${digest} is ${answer.size} bytes, more than the server's limit of ${fetch.maxBytes} (--max-blob-bytes)`, 413);
  }
  const hash = hashOf(digestAlgorithm(digest));
  const toStore = new PassThrough();
  const stored = content.putStream(toStore, digest);
  stored.catch(() => {});
  live?.on("error", () => {});
  let size = 0;
  let held: Buffer | undefined;
  try {
    for await (const chunk of answer.body) {
      const bytes = chunk as Buffer;
      size += bytes.byteLength;
      if (size > fetch.maxBytes) throw new UpstreamFailure(`blob ${digest} is more than the server's limit of ${fetch.maxBytes} bytes (--max-blob-bytes)`, 413);
      hash.update(bytes);
      if (!toStore.write(bytes)) await new Promise((resolve) => toStore.once("drain", resolve));
      // The live client gets every chunk but the last until the whole blob is verified.
      if (live !== undefined && held !== undefined) await writeOut(live, held);
      held = bytes;
    }
    const actual = `${digestAlgorithm(digest)}:${hash.digest("hex")}`;
    if (actual !== digest) throw new UpstreamFailure(`the upstream's blob ${digest} hashes to ${actual}: not kept`, 502);
    toStore.end();
    await stored;
  } catch (error) {
    answer.body.destroy();
    toStore.destroy(error as Error);
    await stored.catch(() => {});
    live?.destroy();
    if (error instanceof UpstreamFailure) throw error;
    throw new UpstreamFailure(`blob ${digest} from the upstream failed: ${(error as Error).message}`);
  }
  await recordBlob(fetch.db, digest, size, fetch.now());
  await linkBlob(fetch.db, fetch.repoUid, digest);
  if (live !== undefined && !live.destroyed) live.end(held);
  return size;
}

/**
 * Brings blob `fetch.digest` into the content store and links it into the repo; answers its size.
 * When the store already holds it, it is only linked; when a fetch of the digest is under way it is awaited (and `live`, if any, is left to
 * the caller, which reads the store after); otherwise this call starts it, streaming to `live`.
 * Answers `{ streamed }`: whether `live` was written and ended. Throws UpstreamFailure.
 */
export async function fetchBlob(fetch: BlobFetch, live?: Writable): Promise<{ size: number; streamed: boolean }> {
  const joined = async (running: Promise<number>) => {
    const size = await running;
    await linkBlob(fetch.db, fetch.repoUid, fetch.digest);
    return { size, streamed: false };
  };
  const running = fetch.flights.get(fetch.digest);
  if (running !== undefined) return joined(running);
  // A fetch that ended since the caller looked left the blob stored.
  const recorded = await heldBlobSize(fetch.db, fetch.content, fetch.digest);
  if (recorded !== undefined) return joined(Promise.resolve(recorded));
  const started = fetch.flights.get(fetch.digest);
  if (started !== undefined) return joined(started);
  const flight = fetchOnce(fetch, live);
  fetch.flights.set(fetch.digest, flight);
  try {
    return { size: await flight, streamed: live !== undefined };
  } finally {
    fetch.flights.delete(fetch.digest);
  }
}
