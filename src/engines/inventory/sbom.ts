// SBOMs attached to images: SPDX 2.x JSON and CycloneDX 1.4-1.6 JSON, bare, as the predicate of an
// in-toto Statement (v0.1 or v1), inside a DSSE envelope (`cosign attest`), or inside a Sigstore
// bundle's DSSE envelope. Packages are read from their purls: SPDX `externalRefs` of type `purl`,
// CycloneDX `components[].purl` (nested components included).
import { InventoryError } from "./errors.js";
import { packageOf, type InventoryPackage } from "./package.js";
import { PurlError } from "./purl.js";

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

export interface SbomPackages {
  format: "spdx" | "cyclonedx";
  packages: InventoryPackage[];
  /** Purls that did not parse, left out. */
  skipped: number;
}

/** Media types (and artifact types) that announce an SBOM or an attestation that may hold one. */
export function isSbomMediaType(mediaType: string): boolean {
  return /spdx|cyclonedx|in-toto|dsse|sigstore\.bundle/i.test(mediaType);
}

const DEPTH_LIMIT = 32;

function fromSpdx(doc: Json): SbomPackages {
  const purls: string[] = [];
  for (const pkg of Array.isArray(doc.packages) ? doc.packages : []) {
    if (!isObject(pkg) || !Array.isArray(pkg.externalRefs)) continue;
    for (const ref of pkg.externalRefs) {
      if (isObject(ref) && ref.referenceType === "purl" && typeof ref.referenceLocator === "string") purls.push(ref.referenceLocator);
    }
  }
  return collect("spdx", purls);
}

function fromCycloneDx(doc: Json): SbomPackages {
  const purls: string[] = [];
  const walk = (components: unknown, depth: number) => {
    if (!Array.isArray(components) || depth > DEPTH_LIMIT) return;
    for (const c of components) {
      if (!isObject(c)) continue;
      if (typeof c.purl === "string") purls.push(c.purl);
      walk(c.components, depth + 1);
    }
  };
  walk(doc.components, 0);
  return collect("cyclonedx", purls);
}

function collect(format: SbomPackages["format"], purls: string[]): SbomPackages {
  const packages: InventoryPackage[] = [];
  let skipped = 0;
  for (const purl of purls) {
    try {
      packages.push(packageOf(purl));
    } catch (error) {
      if (!(error instanceof PurlError)) throw error;
      skipped++;
    }
  }
  return { format, packages, skipped };
}

function decodeBase64Json(payload: unknown, what: string): unknown {
  if (typeof payload !== "string") throw new InventoryError(`${what}: the DSSE payload is not a base64 string`);
  try {
    return JSON.parse(Buffer.from(payload, "base64").toString("utf8"));
  } catch {
    throw new InventoryError(`${what}: the DSSE payload is not base64 of JSON`);
  }
}

/**
 * What a JSON document holds: an SBOM's packages, or undefined for a document that is a valid
 * envelope or statement of something else (SLSA provenance, a signature). Throws InventoryError
 * for SPDX or CycloneDX of a version we do not read.
 */
function sbomOf(doc: unknown, what: string, depth = 0): SbomPackages | undefined {
  if (!isObject(doc) || depth > 4) return undefined;
  if (typeof doc.spdxVersion === "string") {
    if (!/^SPDX-2\.\d+$/.test(doc.spdxVersion)) throw new InventoryError(`${what}: ${doc.spdxVersion} is not SPDX 2.x JSON`);
    return fromSpdx(doc);
  }
  if (doc.bomFormat === "CycloneDX") {
    if (typeof doc.specVersion !== "string" || !/^1\.[2-6]$/.test(doc.specVersion)) throw new InventoryError(`${what}: CycloneDX ${String(doc.specVersion)} is not 1.2 to 1.6`);
    return fromCycloneDx(doc);
  }
  // DSSE envelope (`cosign attest`): {payloadType, payload, signatures}.
  if (typeof doc.payloadType === "string" && "payload" in doc) return sbomOf(decodeBase64Json(doc.payload, what), what, depth + 1);
  // Sigstore bundle: {mediaType, dsseEnvelope, verificationMaterial}.
  if (isObject(doc.dsseEnvelope)) return sbomOf(doc.dsseEnvelope, what, depth + 1);
  // in-toto Statement: {_type, subject, predicateType, predicate}.
  if (typeof doc._type === "string" && /in-toto\.io\/Statement/.test(doc._type)) {
    let predicate = doc.predicate;
    // cosign's older `--type spdx` predicate wraps the document as text: {"Data": "..."}.
    if (isObject(predicate) && typeof predicate.Data === "string") {
      try {
        predicate = JSON.parse(predicate.Data);
      } catch {
        return undefined;
      }
    } else if (isObject(predicate) && isObject(predicate.Data)) {
      predicate = predicate.Data;
    }
    return sbomOf(predicate, what, depth + 1);
  }
  return undefined;
}

/**
 * Reads an attached SBOM document (UTF-8 JSON, a byte order mark skipped). Undefined when it is
 * JSON of another kind (an attestation of something else). Throws InventoryError naming `what`
 * when it is not JSON, or an SPDX/CycloneDX version we do not read.
 */
export function parseSbom(bytes: Uint8Array, what: string): SbomPackages | undefined {
  let text = Buffer.from(bytes).toString("utf8");
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new InventoryError(`${what} is not JSON (SPDX and CycloneDX SBOMs are read in their JSON forms)`);
  }
  return sbomOf(doc, what);
}
