import { createHash } from "node:crypto";
import { resolveEcosystem } from "../../engines/advisories/ecosystems.js";
import type { LibraryPackage } from "../../engines/package-feeds/library-package.js";
import { compareLibraryVersions, latestVersion } from "../../engines/package-feeds/versions.js";
import type { ArtifactTable, ArtifactVersionTable } from "./tables.js";

const hex16 = (...parts: string[]) => createHash("sha256").update(parts.join("\0")).digest("hex").slice(0, 16);

/**
 * The artifact uid of a package in an organization's index: the same on every import, and the same
 * for names the ecosystem holds equal (PEP 503 for PyPI: `PyYAML`, `pyyaml`; exact elsewhere).
 */
export const artifactUid = (org: string, ecosystem: string, name: string): string => `${org}/${hex16(ecosystem, resolveEcosystem(ecosystem).ecosystem.packageKey(name))}`;

/** An artifact and its versions as stored, times still to be set. */
export interface ArtifactRows {
  artifact: Omit<ArtifactTable, "create_time" | "update_time">;
  versions: Omit<ArtifactVersionTable, "create_time" | "update_time">[];
}

/**
 * The rows of one package: versions deduplicated (the first entry of a version wins), ranked by
 * the ecosystem's ordering, and a digest of everything stored so a repeated import is a no-op.
 */
export function artifactRows(org: string, pkg: LibraryPackage): ArtifactRows {
  const seen = new Map<string, LibraryPackage["versions"][number]>();
  for (const v of pkg.versions) if (!seen.has(v.version)) seen.set(v.version, v);
  const ordered = [...seen.values()].sort((a, b) => compareLibraryVersions(pkg.ecosystem, a.version, b.version));
  const uid = artifactUid(org, pkg.ecosystem, pkg.name);
  const versions = ordered.map((v, rank) => ({
    uid: `${uid}/${hex16(v.version)}`,
    artifact_uid: uid,
    version: v.version,
    rank,
    description: v.description ?? "",
    size_bytes: v.sizeBytes,
    publish_time: v.publishTime ?? null,
  }));
  const body = {
    group_uid: org,
    ecosystem: pkg.ecosystem,
    name: pkg.name,
    name_lower: pkg.name.toLowerCase(),
    description: pkg.description,
    latest_version: latestVersion(
      pkg.ecosystem,
      ordered.map((v) => v.version),
    ),
    version_count: versions.length,
  };
  const digest = createHash("sha256").update(JSON.stringify([body, versions])).digest("hex");
  return { artifact: { uid, ...body, digest }, versions };
}
