import type { Writable } from "node:stream";
import type { SecretBox } from "../../../store/secret-box.js";
import type { OutboundPolicy } from "../../../outbound/fetch.js";
import { inTransaction } from "../../../store/transaction.js";
import { digestAlgorithm, digestOf } from "../digests.js";
import { RegistryError } from "../errors.js";
import { queueReportWork } from "../image-inventory.js";
import { recordManifest } from "../images.js";
import { InvalidManifest, parseManifest, type Manifest } from "../manifest.js";
import { MAX_CONFIG_BYTES, storedConfigPlatform } from "../push.js";
import { checkTag, isDigestReference, type RepositoryName } from "../names.js";
import { repositoryHandle, type RegistryParts, type Repository } from "../repository.js";
import { linkBlob, linkedBlobSize } from "../store/blobs.js";
import { findManifest, type ManifestRow } from "../store/manifests.js";
import type { RepoRow } from "../store/repos.js";
import { recordTagCheck, tagCheckTime } from "../store/upstreams.js";
import { moveTagWithEvent } from "../tag-moves.js";
import { fetchBlob, heldBlobSize, type BlobFlights } from "./blob-flights.js";
import { upstreamClient, UpstreamFailure, type UpstreamClient, type UpstreamClients, type UpstreamManifest } from "./upstream-client.js";
import { isUnknown, upstreamError } from "./upstream-errors.js";
import { upstreamFor, type MatchedUpstream } from "./upstream-match.js";

/**
 * Pull-through: the repository handle of a name under an upstream's prefix (see `Upstream` in the
 * proto). Reads answer what the registry holds when it holds it; what it lacks is fetched from the
 * upstream and stored as ordinary content, as the system (`act.via` "registry pull-through", no
 * subject): the repo created as a first push creates it, manifests recorded (an index with its
 * children, an image with its config blob, the referrers the upstream lists), the tag moved with
 * its Tag History record and events, image reports queued. Layers come in as they are pulled,
 * streamed to the client while stored (`blob-flights.ts`). A tag is asked again (HEAD) once its
 * upstream's `tag_freshness` has passed since it was last found current; a digest never is. When
 * the upstream fails and something is held, that is answered (and `onFallback` told); when nothing
 * is, the pull fails with the upstream's failure (`upstreamError`). Writes (push, delete) are the
 * plain handle's.
 */

/** What pull-through runs with, made once per registry host. */
export interface PullThroughParts {
  secrets: SecretBox;
  clients: UpstreamClients;
  flights: BlobFlights;
  /** Largest blob brought in, bytes (`--max-blob-bytes`). */
  maxBlobBytes: number;
  /** Told each time an upstream failed and what was held was answered instead. */
  onFallback?: (upstream: string) => void;
}

/** The parts of pull-through: `policy` is the upstreams' outbound policy, whose answers are bounded by `maxBlobBytes`. */
export function createPullThroughParts(options: { secrets: SecretBox; policy: Omit<OutboundPolicy, "maxBytes">; maxBlobBytes: number; now: () => number; onFallback?: (upstream: string) => void }): PullThroughParts {
  return {
    secrets: options.secrets,
    clients: { policy: { ...options.policy, maxBytes: options.maxBlobBytes }, tokens: new Map(), now: options.now },
    flights: new Map(),
    maxBlobBytes: options.maxBlobBytes,
    onFallback: options.onFallback,
  };
}

/** How deep an index's children and referrers are followed. */
const MAX_DEPTH = 2;
const VIA = "registry pull-through";

/** The handle of repository `name`: the plain one, wrapped for pull-through when `pullThrough` is given (the registry host's). */
export function pullThroughRepository(parts: RegistryParts, pullThrough: PullThroughParts | undefined, name: RepositoryName): Repository {
  const base = repositoryHandle(parts, name);
  return pullThrough === undefined ? base : wrap(parts, pullThrough, base);
}

function wrap(parts: RegistryParts, pt: PullThroughParts, base: Repository): Repository {
  const { db, content, now } = parts;
  let matched: Promise<(MatchedUpstream & { client: UpstreamClient }) | undefined> | undefined;
  const upstream = () =>
    (matched ??= upstreamFor(db, pt.secrets, base.name).then((m) => (m === undefined ? undefined : { ...m, client: upstreamClient(pt.clients, m.target) })));
  /** Blobs `blobSize` found at the upstream and not here, by digest: `writeBlob` brings them in. */
  const pending = new Map<string, number>();
  const repo = () => base.createIfMissing("", VIA);

  /** The platform of an image's config, the config brought in first when the repo lacks it; undefined when it cannot be read. */
  async function readConfigPlatform(up: MatchedUpstream & { client: UpstreamClient }, row: RepoRow, manifest: Manifest) {
    if (manifest.kind !== "image") return undefined;
    try {
      if ((await linkedBlobSize(db, row.uid, manifest.config.digest)) === undefined && manifest.config.size <= MAX_CONFIG_BYTES) {
        await fetchBlob({ db, content, flights: pt.flights, client: up.client, remote: up.remote, repoUid: row.uid, digest: manifest.config.digest, maxBytes: pt.maxBlobBytes, now });
      }
      return await storedConfigPlatform(content, manifest);
    } catch {
      return undefined; // the platform stays unknown; the config comes in when it is pulled
    }
  }

  /**
   * Fetches manifest `reference` from the upstream and stores it (an index's children first, then
   * the referrers the upstream lists); for a tag, moves the tag to it. Answers the stored row.
   * Throws MANIFEST_UNKNOWN when the upstream has none, UNAVAILABLE (or the upstream's refusal)
   * when it fails or answers a manifest that is invalid or does not hash to its digest.
   */
  async function bring(up: MatchedUpstream & { client: UpstreamClient }, reference: string, depth: number): Promise<ManifestRow> {
    const byDigest = isDigestReference(reference);
    let answered: UpstreamManifest | undefined;
    try {
      answered = await up.client.manifest(up.remote, reference);
    } catch (error) {
      throw upstreamError(up.row.url, error);
    }
    const got = answered;
    if (got === undefined) throw new RegistryError("MANIFEST_UNKNOWN", `the upstream ${up.row.url} has no manifest ${reference} in ${up.remote}`, { upstream: up.row.url, reference });
    let manifest: Manifest;
    try {
      manifest = parseManifest(got.bytes, got.mediaType);
    } catch (error) {
      if (error instanceof InvalidManifest) throw upstreamError(up.row.url, new UpstreamFailure(`its manifest ${reference} is invalid: ${error.message}`));
      throw error;
    }
    const digest = digestOf(got.bytes, byDigest ? digestAlgorithm(reference) : "sha256");
    if ((byDigest && digest !== reference) || (got.digest !== undefined && got.digest.startsWith("sha256:") && !byDigest && got.digest !== digest)) {
      throw upstreamError(up.row.url, new UpstreamFailure(`its manifest ${reference} hashes to ${digest}, not ${byDigest ? reference : got.digest}: not kept`));
    }
    const row = await repo();
    if (manifest.kind === "index" && depth < MAX_DEPTH) {
      for (const child of manifest.manifests) {
        if ((await findManifest(db, row.uid, child.digest)) === undefined) await bring(up, child.digest, depth + 1);
      }
    }
    const platform = await readConfigPlatform(up, row, manifest);
    const time = now();
    const tag = byDigest ? undefined : reference;
    await inTransaction(db, undefined, async (trx) => {
      const recorded = await recordManifest(trx, row.uid, got.bytes, manifest, { digest, platform, requireBlobs: false, now: time });
      if (recorded.written) await queueReportWork(trx, row.uid, digest, manifest, time, tag);
      if (tag !== undefined) {
        await moveTagWithEvent(trx, row, { name: tag, digest }, { now: time, typePrefix: parts.eventTypePrefix, via: VIA, actor: "" });
        await recordTagCheck(trx, row.uid, tag, time);
      }
    });
    if (depth === 0) await bringReferrers(up, row, digest);
    const stored = await findManifest(db, row.uid, digest);
    if (stored === undefined) throw new RegistryError("MANIFEST_UNKNOWN", `${base.name.full} holds no manifest ${digest}`, { digest });
    return stored;
  }

  /** Stores the referrers of `digest` the upstream lists (when it serves the referrers API); their failures are not the pull's. */
  async function bringReferrers(up: MatchedUpstream & { client: UpstreamClient }, row: RepoRow, digest: string): Promise<void> {
    try {
      const index = await up.client.referrers(up.remote, digest);
      if (index === undefined) return;
      const parsed = parseManifest(index, "application/vnd.oci.image.index.v1+json");
      if (parsed.kind !== "index") return;
      for (const referrer of parsed.manifests) {
        if ((await findManifest(db, row.uid, referrer.digest)) === undefined) await bring(up, referrer.digest, MAX_DEPTH);
      }
    } catch {
      // A referrer the upstream lists but does not serve leaves the image as it is.
    }
  }

  /** The held manifest `reference` names, or undefined. */
  const held = (reference: string) =>
    base.resolveManifest(reference).catch((error: unknown) => {
      if (isUnknown(error)) return undefined;
      throw error;
    });

  return {
    ...base,

    async resolveManifest(reference) {
      const up = await upstream();
      if (up === undefined) return base.resolveManifest(reference);
      const local = await held(reference);
      if (isDigestReference(reference)) return local ?? bring(up, reference, 0);
      const tag = checkTag(reference);
      const row = await base.find();
      if (local !== undefined && row !== undefined) {
        const checked = await tagCheckTime(db, row.uid, tag);
        if (checked !== undefined && now() - checked < up.row.tag_freshness_ms) return local;
      }
      let current: string | undefined;
      try {
        current = await up.client.manifestDigest(up.remote, tag);
      } catch (error) {
        if (local === undefined || !(error instanceof UpstreamFailure)) throw upstreamError(up.row.url, error);
        pt.onFallback?.(up.row.url);
        return local;
      }
      if (current === undefined) {
        // The upstream dropped the tag: what is held stays served.
        if (local !== undefined) return local;
        throw new RegistryError("MANIFEST_UNKNOWN", `the upstream ${up.row.url} has no tag ${tag} in ${up.remote}`, { upstream: up.row.url, tag });
      }
      if (local !== undefined && row !== undefined && current === local.digest) {
        await recordTagCheck(db, row.uid, tag, now());
        return local;
      }
      try {
        return await bring(up, tag, 0);
      } catch (error) {
        if (local === undefined || !(error instanceof RegistryError && (error.kind === "UNAVAILABLE" || error.kind === "TOOMANYREQUESTS"))) throw error;
        pt.onFallback?.(up.row.url);
        return local;
      }
    },

    async blobSize(digest) {
      try {
        return await base.blobSize(digest);
      } catch (error) {
        if (!isUnknown(error)) throw error;
        const up = await upstream();
        if (up === undefined) throw error;
        const recorded = await heldBlobSize(db, content, digest);
        if (recorded !== undefined) {
          await linkBlob(db, (await repo()).uid, digest);
          return recorded;
        }
        let size: number | undefined;
        try {
          size = await up.client.blobSize(up.remote, digest);
        } catch (failure) {
          throw upstreamError(up.row.url, failure);
        }
        if (size === undefined) throw error;
        if (size > pt.maxBlobBytes) throw new RegistryError("SIZE_INVALID", `blob ${digest} of the upstream is ${size} bytes, more than this server's limit of ${pt.maxBlobBytes}`, { digest, size });
        pending.set(digest, size);
        return size;
      }
    },

    async blobRedirectUrl(digest, expiresInSeconds) {
      return pending.has(digest) ? undefined : base.blobRedirectUrl(digest, expiresInSeconds);
    },

    async writeBlob(digest, range, out: Writable) {
      const size = pending.get(digest);
      const up = size === undefined ? undefined : await upstream();
      if (size === undefined || up === undefined) return base.writeBlob(digest, range, out);
      const whole = range.start === 0 && range.end === size - 1;
      const fetch = { db, content, flights: pt.flights, client: up.client, remote: up.remote, repoUid: (await repo()).uid, digest, maxBytes: pt.maxBlobBytes, now };
      let streamed: boolean;
      try {
        ({ streamed } = await fetchBlob(fetch, whole ? out : undefined));
      } catch (error) {
        throw upstreamError(up.row.url, error);
      }
      pending.delete(digest);
      if (!streamed) await base.writeBlob(digest, range, out);
    },
  };
}
