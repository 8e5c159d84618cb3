#!/usr/bin/env bash
# Builds the container image for ContainerImageIT in the background while the other integration tests run: Maven
# starts it at pre-integration-test (pom.xml, profile prebuild-test-image), and ContainerImageIT waits for it instead
# of building the image itself (a build is minutes of mostly CPU on its own; the other tests mostly wait).
#
# Files, all under target/container-image/:
#   prebuild.name    the image's name, written before the build starts
#   prebuild.pid     this script's process id while it runs
#   build.log        the build's output (scripts/build-image.sh)
#   prebuild.status  the build's exit status, written when it ends
# Where the image cannot be built here (not root, no buildah or mmdebstrap) it writes nothing and exits 0:
# ContainerImageIT then builds or skips as it would alone, and says why.
# Images of earlier prebuilds that no test removed (a run killed midway) are removed first.
set -u
cd "$(dirname "$0")/.."
dir=target/container-image
mkdir -p "$dir"
rm -f "$dir/prebuild.name" "$dir/prebuild.pid" "$dir/prebuild.status"
if [ "$(id -u)" -ne 0 ] || ! command -v buildah >/dev/null || ! command -v mmdebstrap >/dev/null; then
  exit 0
fi
buildah images --format '{{.Name}}:{{.Tag}}' 2>/dev/null | grep -E '^localhost/payments-authorization:it-prebuild-' \
  | while read -r stale; do buildah rmi "$stale" >/dev/null 2>&1 || true; done
name="localhost/payments-authorization:it-prebuild-$$"
echo $$ > "$dir/prebuild.pid"
echo "$name" > "$dir/prebuild.name"
status=0
bash scripts/build-image.sh "$name" > "$dir/build.log" 2>&1 || status=$?
echo "$status" > "$dir/prebuild.status.tmp"
mv "$dir/prebuild.status.tmp" "$dir/prebuild.status"
rm -f "$dir/prebuild.pid"
