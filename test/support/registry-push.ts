import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import type { BuiltImage } from "./oci-layout.js";

/**
 * Pushes and pulls over the OCI Distribution API with plain fetch, each request to the next of
 * `hosts` in turn (one host: all to it; several: the replicas behind a round-robin balancer).
 * `Location`s are paths, so any host continues what another started.
 */
export interface RegistryClient {
  request(method: string, path: string, options?: { body?: Buffer; headers?: Record<string, string> }): Promise<{ status: number; headers: Headers; bytes: Buffer }>;
  /** A blob in chunks of `chunkBytes`: POST, then one PATCH per chunk, then PUT ?digest. Returns the hosts that took each request. */
  pushBlobInChunks(name: string, bytes: Buffer, chunkBytes: number): Promise<string[]>;
  /** A blob in one POST ?digest=. */
  pushBlob(name: string, bytes: Buffer): Promise<void>;
  /** Config and layers (whole), then the manifest under `tag`. */
  pushImage(name: string, tag: string, image: BuiltImage): Promise<void>;
}

export const sha256 = (bytes: Buffer) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;

export function registryClient(hosts: string[], token: string): RegistryClient {
  let next = 0;
  const host = () => hosts[next++ % hosts.length];

  async function request(method: string, path: string, options: { body?: Buffer; headers?: Record<string, string> } = {}) {
    const base = host();
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...options.headers },
      body: options.body && new Uint8Array(options.body),
    });
    return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()), base };
  }

  async function pushBlob(name: string, bytes: Buffer) {
    const res = await request("POST", `/v2/${name}/blobs/uploads/?digest=${sha256(bytes)}`, { body: bytes });
    assert.equal(res.status, 201, res.bytes.toString());
  }

  return {
    request,
    pushBlob,
    async pushBlobInChunks(name, bytes, chunkBytes) {
      const used: string[] = [];
      const start = await request("POST", `/v2/${name}/blobs/uploads/`);
      assert.equal(start.status, 202, start.bytes.toString());
      used.push(start.base);
      let location = start.headers.get("location")!;
      for (let offset = 0; offset < bytes.length; offset += chunkBytes) {
        const chunk = bytes.subarray(offset, Math.min(offset + chunkBytes, bytes.length));
        const patch = await request("PATCH", location, {
          body: chunk,
          headers: { "content-type": "application/octet-stream", "content-range": `${offset}-${offset + chunk.length - 1}` },
        });
        assert.equal(patch.status, 202, `PATCH at ${offset} on ${patch.base}: ${patch.bytes.toString()}`);
        assert.equal(patch.headers.get("range"), `0-${offset + chunk.length - 1}`);
        used.push(patch.base);
        location = patch.headers.get("location")!;
      }
      const put = await request("PUT", `${location}${location.includes("?") ? "&" : "?"}digest=${sha256(bytes)}`);
      assert.equal(put.status, 201, `PUT on ${put.base}: ${put.bytes.toString()}`);
      used.push(put.base);
      return used;
    },
    async pushImage(name, tag, image) {
      for (const blob of [image.config, ...image.layers]) await pushBlob(name, blob.bytes);
      const put = await request("PUT", `/v2/${name}/manifests/${tag}`, { body: image.manifest.bytes, headers: { "content-type": image.manifest.mediaType } });
      assert.equal(put.status, 201, put.bytes.toString());
    },
  };
}
