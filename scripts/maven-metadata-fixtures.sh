#!/usr/bin/env bash
# Rebuilds test/fixtures/libraries/maven: Maven itself (offline, maven-install-plugin 3.2.0) installs
# each release POM of the artifacts below from the local repository (~/.m2/repository) into a fresh
# repository laid out as Maven lays one out, writing its own `maven-metadata-local.xml` per artifact.
# Versions are installed in `ls` order, so each file's <release> is the last one installed, not the
# highest. Maven's `_remote.repositories` bookkeeping files are dropped.
# Run from the repository root: bash scripts/maven-metadata-fixtures.sh
set -euo pipefail
out=test/fixtures/libraries/maven
source=${MAVEN_SOURCE_REPOSITORY:-$HOME/.m2/repository}
rm -rf "$out"
mkdir -p "$out"
for artifact in \
  com/google/guava/guava \
  com/fasterxml/jackson/core/jackson-annotations \
  org/apache/commons/commons-lang3 \
  org/apache/maven/doxia/doxia \
  org/codehaus/plexus/plexus-classworlds \
  org/junit/jupiter/junit-jupiter-api \
  org/ow2/asm/asm \
  org/slf4j/slf4j-api; do
  for pom in $(ls "$source/$artifact"/*/*.pom); do
    mvn --offline --quiet org.apache.maven.plugins:maven-install-plugin:3.2.0:install-file \
      -Dfile="$pom" -DpomFile="$pom" -Dpackaging=pom -DlocalRepositoryPath="$PWD/$out"
  done
done
find "$out" -name _remote.repositories -delete
