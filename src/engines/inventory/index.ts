// What is in an image: packages as purls, from the package databases and lockfiles in its layers
// (read streaming) and from SBOMs attached to it, each mapped to the OSV ecosystem its advisories
// are filed under. Pure readers and stream walkers: no store, no registry. They run in the caller's
// thread, or on worker threads (`createScanThreads`) that keep them off its event loop.
export { parseApkInstalled } from "./apk.js";
export { compressionOf, decompressed } from "./decompress.js";
export { distroQualifier, parseOsRelease, type Distro } from "./distro.js";
export { controlStanzas, parseDpkgStatus } from "./dpkg.js";
export { InventoryError, stopReason } from "./errors.js";
export { appendAll, packagesOfFiles, packagesOfImage, type AttachedSbom, type FileInventory } from "./image.js";
export { createLayerCache, LAYER_CACHE_DEFAULTS, type LayerCacheOptions } from "./layer-cache.js";
export { DEFAULT_LAYER_LIMITS, entryPath, isWantedPath, readImageFiles, readLayerHere, type LayerCache, type LayerInput, type LayerLimits, type LayerOutcome, type LayerReader, type ReadOptions } from "./layers.js";
export { parseCargoLock, parsePackageLock } from "./lockfiles.js";
export { osvIdentity, packageOf, packageOfPurl, uniquePackages, type InventoryPackage } from "./package.js";
export { formatPurl, parsePurl, purlIdentity, PurlError, type Purl } from "./purl.js";
export { isSbomMediaType, parseSbom, type SbomPackages } from "./sbom.js";
export { createScanThreads, SCAN_THREADS_DEFAULTS, type ScanThreads, type ScanThreadsOptions } from "./scan-threads.js";
export { DEFAULT_MAX_ZSTD_WINDOW_BYTES } from "./zstd-frames.js";
