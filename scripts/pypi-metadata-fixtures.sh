#!/usr/bin/env bash
# Rebuilds test/fixtures/libraries/pypi: downloads each distribution below with pip (the machine's
# configured index; pip's own resolution picks the file) and keeps only its core metadata, unchanged:
# a wheel's `*.dist-info/METADATA` as `<wheel file name>.metadata` (the name PEP 658 indexes serve it
# under). Besides: one whole small wheel (six 1.17.0, with its size), and the PKG-INFO of sdists that
# Debian's python3-six and python3-toml install (`*.egg-info/PKG-INFO`), and python3-wheel's packed
# as an sdist is (`wheel-0.38.4/PKG-INFO` in a .tar.gz, by GNU tar).
# Run from the repository root: bash scripts/pypi-metadata-fixtures.sh
set -euo pipefail
out=test/fixtures/libraries/pypi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
while read -r requirement; do
  [ -z "$requirement" ] && continue
  pip download --quiet --no-deps --only-binary=:all: --dest "$tmp/$requirement" "$requirement"
  for wheel in "$tmp/$requirement"/*.whl; do
    python3 - "$wheel" "$out/$(basename "$wheel").metadata" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    [name] = [n for n in z.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA")]
    open(sys.argv[2], "wb").write(z.read(name))
PY
  done
done <<'LIST'
alabaster==0.7.13
alabaster==1.0.0
black==22.12.0
black==26.5.1
certifi==2026.7.22
deprecated==1.2.18
deprecated==1.3.1
docutils==0.22.4
docutils==0.23
fsspec==2026.6.0
fsspec==2026.7.0
fsspec==2026.9.0
idna==3.20
mistune==2.0.5
mistune==3.3.4
more-itertools==10.8.0
more-itertools==11.1.0
mpmath==1.3.0
mpmath==1.4.1
numpy==1.26.4
numpy==2.0.2
numpy==2.2.6
numpy==2.3.5
numpy==2.4.6
packaging==26.3
pytest==8.4.2
pytest==9.1.1
requests==2.34.2
rich==13.9.4
rich==15.0.0
six==1.17.0
tabulate==0.8.10
tabulate==0.10.0
urllib3==2.8.0
websockets==15.0.1
websockets==16.1.1
websockets==17.1
wheel==0.46.3
wheel==0.48.0
zipp==3.23.0
zipp==4.1.0
LIST

pip download --quiet --no-deps --only-binary=:all: --dest "$out" six==1.17.0
for project in six-1.16.0 toml-0.10.2; do
  mkdir -p "$out/$project.egg-info"
  cp "/usr/lib/python3/dist-packages/$project.egg-info/PKG-INFO" "$out/$project.egg-info/PKG-INFO"
done
mkdir -p "$tmp/sdist/wheel-0.38.4"
cp /usr/lib/python3/dist-packages/wheel-0.38.4.egg-info/PKG-INFO "$tmp/sdist/wheel-0.38.4/PKG-INFO"
tar --create --gzip --owner=0 --group=0 --mtime=2022-11-09 --file "$out/wheel-0.38.4.tar.gz" --directory "$tmp/sdist" wheel-0.38.4
