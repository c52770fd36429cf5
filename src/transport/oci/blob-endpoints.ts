import type { Writable } from "node:stream";
import { checkDigest, parseRepositoryName, RegistryError, type Repository, type RepositoryName } from "../../domains/registry/index.js";
import { redirectBlob } from "./blob-redirect.js";
import { matchesIfNoneMatch } from "./conditional.js";
import { writeEmpty, writeNotModified, type RegistryContext, type RegistryRequest, type RegistryResponse } from "./context.js";
import { mayMountFrom } from "./registry-auth.js";
import { fail, ociErrorOf, REGISTRY_VERSION_HEADERS, RegistryFailure } from "./registry-errors.js";
import type { RepositoryCall } from "./repository-call.js";

/**
 * Blobs of the OCI Distribution API: `HEAD|GET /v2/<name>/blobs/<digest>`, and uploads:
 * `POST /v2/<name>/blobs/uploads/` (start; monolithic with `?digest=`; `?mount=&from=`),
 * `GET|PATCH|PUT|DELETE /v2/<name>/blobs/uploads/<id>` (status, chunk, finish, cancel). Each is
 * handed its repository resolved and the caller authorized (`answerOnRepository`).
 */

const uploadLocation = (name: RepositoryName, id: string) => `/v2/${name.full}/blobs/uploads/${id}`;
const blobLocation = (name: RepositoryName, digest: string) => `/v2/${name.full}/blobs/${digest}`;
/** The Range header of an upload of `size` bytes: the inclusive byte range received. */
const receivedRange = (size: number) => `0-${Math.max(0, size - 1)}`;

function uploadHeaders(name: RepositoryName, id: string, size: number): Record<string, string> {
  return { location: uploadLocation(name, id), range: receivedRange(size), "docker-upload-uuid": id };
}

/**
 * The byte range a `Range` header asks of a blob of `size` (RFC 9110 14.1.2): `bytes=<first>-`,
 * `bytes=<first>-<last>` (cut to the blob) or `bytes=-<suffix length>`. Undefined, the whole blob
 * answered 200, for no header and for one this server does not serve (several ranges, another
 * unit, bad syntax), as the RFC lets a server ignore Range; throws 416 for a valid range the blob
 * cannot satisfy.
 */
function byteRange(header: string | undefined, size: number): { start: number; end: number } | undefined {
  const match = header === undefined ? null : /^bytes=(\d{0,15})-(\d{0,15})$/.exec(header.trim());
  if (!match || (match[1] === "" && match[2] === "")) return undefined;
  let start: number;
  let end: number;
  if (match[1] === "") {
    start = Math.max(0, size - Number(match[2]));
    end = size - 1;
    if (Number(match[2]) === 0) start = size;
  } else {
    start = Number(match[1]);
    end = match[2] === "" ? size - 1 : Math.min(Number(match[2]), size - 1);
    if (match[2] !== "" && Number(match[2]) < start) return undefined;
  }
  if (start >= size || start > end) {
    fail(416, "BLOB_UNKNOWN", "the requested range is not satisfiable", { range: header, size }, { "content-range": `bytes */${size}` });
  }
  return { start, end };
}

/** `HEAD|GET /v2/<name>/blobs/<digest>`, with a single byte range on GET. */
export async function handleBlob(ctx: RegistryContext, req: RegistryRequest, res: RegistryResponse, { repo }: RepositoryCall, digestText: string): Promise<void> {
  const digest = checkDigest(digestText);
  const size = await repo.blobSize(digest);
  const headers: Record<string, string> = Object.assign(
    {
      "content-type": "application/octet-stream",
      "docker-content-digest": digest,
      etag: `"${digest}"`,
      "accept-ranges": "bytes",
      "cache-control": "max-age=31536000",
    },
    REGISTRY_VERSION_HEADERS,
  );
  if (matchesIfNoneMatch(req, digest)) return writeNotModified(res, headers);
  if (await redirectBlob(ctx, req, res, repo, digest)) return;
  if (req.method === "HEAD") {
    res.writeHead(200, Object.assign(headers, { "content-length": String(size) }));
    res.end();
    return;
  }
  const range = byteRange(typeof req.headers.range === "string" ? req.headers.range : undefined, size);
  if (range === undefined) {
    res.writeHead(200, Object.assign(headers, { "content-length": String(size) }));
  } else {
    res.writeHead(206, Object.assign(headers, { "content-length": String(range.end - range.start + 1), "content-range": `bytes ${range.start}-${range.end}/${size}` }));
  }
  await repo.writeBlob(digest, range ?? { start: 0, end: size - 1 }, res as unknown as Writable);
}

/** `DELETE /v2/<name>/blobs/<digest>`: 202 when the repository served it (it serves it no more), 404 BLOB_UNKNOWN otherwise. Audited as `registry.blob.delete`. */
export async function handleBlobDelete(ctx: RegistryContext, req: RegistryRequest, res: RegistryResponse, { repo }: RepositoryCall, digestText: string): Promise<void> {
  const digest = checkDigest(digestText);
  if (!(await repo.deleteBlob(digest))) fail(404, "BLOB_UNKNOWN", `blob ${digest} is not in ${repo.name.full}`, { digest });
  writeEmpty(res, 202, { "docker-content-digest": digest });
}

/** Appends the request's body to upload `id`; with `chunk`, it must be exactly that range (else 416 with the upload's headers, the upload as it was). */
async function appendBody(ctx: RegistryContext, req: RegistryRequest, repo: Repository, id: string, chunk?: { length: number; headers: Record<string, string> }): Promise<number> {
  try {
    return await repo.appendUpload(id, req, ctx.maxBlobBytes, chunk?.length);
  } catch (error) {
    if (error instanceof RegistryError && error.kind === "BLOB_UPLOAD_INVALID") throw new RegistryFailure(ociErrorOf(error, chunk?.headers));
    throw error;
  }
}

/**
 * The byte count a chunk's `Content-Range: <start>-<end>` announces (a PATCH, or the closing PUT),
 * or undefined without the header. Throws 416 when it does not start where the upload is (`size`),
 * ends before it starts, or disagrees with the request's Content-Length.
 */
function chunkLength(req: RegistryRequest, size: number, headers: Record<string, string>): number | undefined {
  const contentRange = req.headers["content-range"];
  if (typeof contentRange !== "string") return undefined;
  const match = /^(?:bytes[ =])?(\d{1,15})-(\d{1,15})$/.exec(contentRange.trim());
  const refuse = (message: string): never => fail(416, "BLOB_UPLOAD_INVALID", message, { range: contentRange.slice(0, 64), size }, headers);
  if (!match) refuse("Content-Range must be <start>-<end>, the chunk's first and last byte offsets");
  const [start, end] = [Number(match![1]), Number(match![2])];
  if (start !== size) refuse(`a chunk must start at ${size}, the bytes received so far`);
  if (end < start) refuse("the chunk's Content-Range ends before it starts");
  const length = end - start + 1;
  const declared = req.headers["content-length"];
  if (declared !== undefined && Number(declared) !== length) refuse(`the body is ${declared} bytes, not the ${length} bytes its Content-Range names`);
  return length;
}

/**
 * `POST /v2/<name>/blobs/uploads/`: start an upload, upload a whole blob (`?digest=`), or mount one (`?mount=&from=`).
 * Audited as `registry.blob.upload` or `registry.blob.mount` of `<repo>@<digest>`; starting an upload is not a change.
 */
export async function handleUploadStart(ctx: RegistryContext, req: RegistryRequest, res: RegistryResponse, { repo, access }: RepositoryCall, query: URLSearchParams): Promise<void> {
  const { name } = repo;
  const param = (key: string) => query.get(key) ?? undefined;
  const [mountText, digestText] = [param("mount"), param("digest")];
  // Every parameter is checked before anything (a repo, an upload) is created.
  const mount = mountText === undefined ? undefined : checkDigest(mountText);
  const whole = digestText === undefined ? undefined : checkDigest(digestText);
  const from = param("from") === undefined ? undefined : parseRepositoryName(param("from")!);
  await repo.createIfMissing(access.subject);

  if (mount !== undefined) {
    if (from !== undefined) {
      // Mounting needs pull on the source; otherwise the client uploads the blob as usual (202).
      const source = ctx.repository(from);
      if ((await mayMountFrom(ctx, req, repo, source)) && (await repo.mountBlob(source, mount))) {
        writeEmpty(res, 201, { location: blobLocation(name, mount), "docker-content-digest": mount });
        return;
      }
    }
    if (await repo.mountBlob(repo, mount)) {
      writeEmpty(res, 201, { location: blobLocation(name, mount), "docker-content-digest": mount });
      return;
    }
  }

  if (mount !== undefined) ctx.note.change = undefined; // not mounted: an upload starts instead
  const id = await repo.startUpload();
  if (whole !== undefined && mount === undefined) {
    try {
      await appendBody(ctx, req, repo, id);
      await repo.finishUpload(id, whole);
    } catch (error) {
      await repo.cancelUpload(id);
      throw error;
    }
    writeEmpty(res, 201, { location: blobLocation(name, whole), "docker-content-digest": whole });
    return;
  }
  req.resume(); // a body on a session start carries nothing
  writeEmpty(res, 202, uploadHeaders(name, id, 0));
}

/** `GET|PATCH|PUT|DELETE /v2/<name>/blobs/uploads/<id>`; the PUT that completes an upload is audited as `registry.blob.upload` of `<repo>@<digest>`. */
export async function handleUpload(ctx: RegistryContext, req: RegistryRequest, res: RegistryResponse, { repo }: RepositoryCall, id: string, query: URLSearchParams): Promise<void> {
  const { name } = repo;
  const size = await repo.uploadSize(id);

  switch (req.method) {
    case "GET":
      writeEmpty(res, 204, uploadHeaders(name, id, size));
      return;
    case "DELETE":
      await repo.cancelUpload(id);
      writeEmpty(res, 204);
      return;
    case "PATCH": {
      const headers = uploadHeaders(name, id, size);
      const length = chunkLength(req, size, headers);
      const total = await appendBody(ctx, req, repo, id, length === undefined ? undefined : { length, headers });
      writeEmpty(res, 202, uploadHeaders(name, id, total));
      return;
    }
    case "PUT": {
      const digest = checkDigest(query.get("digest"));
      // The final chunk, when it names its range, is checked as a PATCH's: out of order is 416 (the spec's MUST), nothing appended.
      const headers = uploadHeaders(name, id, size);
      const length = chunkLength(req, size, headers);
      await appendBody(ctx, req, repo, id, length === undefined ? undefined : { length, headers });
      await repo.finishUpload(id, digest);
      writeEmpty(res, 201, { location: blobLocation(name, digest), "docker-content-digest": digest });
      return;
    }
    default:
      fail(405, "UNSUPPORTED", `method ${req.method} is not allowed on an upload`, null, { allow: "GET, PATCH, PUT, DELETE" });
  }
}
