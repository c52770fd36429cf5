#!/usr/bin/env bash
# Builds an OCI image layout of one linux/amd64 image whose single gzip'd layer holds the given files,
# for trying vulnerability reports without an image builder:
#   scripts/oci-layout-of.sh <layout dir> <tag> <path in the image>=<local file>...
# Prints the image manifest's digest. Needs tar, gzip and sha256sum (coreutils).
set -euo pipefail
if [ $# -lt 3 ]; then echo "usage: $0 <layout dir> <tag> <path in image>=<file>..." >&2; exit 2; fi
out=$1 tag=$2
shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/root" "$out/blobs/sha256"
for spec in "$@"; do
  dest=${spec%%=*} src=${spec#*=}
  mkdir -p "$work/root/$(dirname "$dest")"
  cp "$src" "$work/root/$dest"
done
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$work/root" -cf "$work/layer.tar" .
gzip -n -9 <"$work/layer.tar" >"$work/layer.tar.gz"
put() { local d; d=$(sha256sum "$1" | cut -d' ' -f1); cp "$1" "$out/blobs/sha256/$d"; echo "$d"; }
size() { stat -c %s "$1"; }
layer=$(put "$work/layer.tar.gz")
printf '{"architecture":"amd64","os":"linux","config":{},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
  "$(sha256sum "$work/layer.tar" | cut -d' ' -f1)" >"$work/config.json"
config=$(put "$work/config.json")
printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%d},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"sha256:%s","size":%d}]}' \
  "$config" "$(size "$work/config.json")" "$layer" "$(size "$work/layer.tar.gz")" >"$work/manifest.json"
manifest=$(put "$work/manifest.json")
printf '{"imageLayoutVersion":"1.0.0"}' >"$out/oci-layout"
printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%d,"annotations":{"org.opencontainers.image.ref.name":"%s"}}]}' \
  "$manifest" "$(size "$work/manifest.json")" "$tag" >"$out/index.json"
echo "sha256:$manifest"
