#!/usr/bin/env bash
# Builds the container image from the unchanged Dockerfile with buildah: no Docker engine, no registry needed.
#
#   scripts/build-image.sh [IMAGE]          default IMAGE: localhost/payments-authorization:dev
#   scripts/build-image.sh --real-bases [IMAGE]
#
# STAND-IN BASE IMAGES. The Dockerfile's bases (maven:3.9-eclipse-temurin-25 and eclipse-temurin:25-jre) live on
# Docker Hub, which the machines this project is built on cannot reach. So, by default, this script first makes two
# local stand-ins and passes them to the Dockerfile through its BUILD_IMAGE and RUNTIME_IMAGE build arguments:
#   runtime: a minimal Debian bookworm root filesystem (mmdebstrap --variant=minbase) plus a JRE made with jlink from
#            the local JDK 25 at /opt/java/openjdk (all runtime modules, no compiler, no jlink, no jar tool), with the
#            same JAVA_HOME and PATH as the real image;
#   build:   the same Debian plus Debian's Maven, with the whole local JDK 25 at /opt/java/openjdk.
# They are stand-ins, not copies: the real images are Ubuntu-based and carry more packages. What the image check
# proves about the Dockerfile (its stages, user, entrypoint, AOT cache, read-only root) holds on both; the base's own
# contents (CVE state, locales, CA certificates) are only proved by building on the real bases, which is the same
# command with registry access: --real-bases here, or plain `docker build .`.
#
# The stand-ins are built once per machine and kept in buildah's storage (their tag names the JDK they hold; delete
# them with `buildah rmi` to rebuild). During the build the host's Maven directory (~/.m2, override with
# IMAGE_MAVEN_DIR, empty for none) is bind-mounted as the build stand-in's ~/.m2, so dependencies `mvn verify` already downloaded are
# not downloaded again; the Dockerfile itself stays a plain Dockerfile that resolves everything on its own.
#
# Needs: root (mounts, buildah's storage), buildah and mmdebstrap (apt-get install buildah mmdebstrap), and a JDK 25
# (JAVA_HOME when it is one, else the first under /usr/lib/jvm; IMAGE_STANDIN_JDK overrides).
# Environment: DEBIAN_MIRROR (default http://deb.debian.org/debian).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEBIAN_SUITE=bookworm
DEBIAN_MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
# Bump when the recipe below changes, so every machine rebuilds its stand-ins.
STANDIN_RECIPE=1
# Modules of a JRE: everything in the JDK except its development tools (and the modules only they need).
JRE_EXCLUDED_MODULES=(jdk.compiler jdk.internal.md jdk.javadoc jdk.jdeps jdk.jlink jdk.jpackage jdk.jshell jdk.jartool
  jdk.jconsole jdk.hotspot.agent jdk.jstatd jdk.jdi jdk.jcmd jdk.editpad jdk.internal.ed jdk.internal.le
  jdk.internal.opt jdk.graal.compiler jdk.graal.compiler.management)

log() { printf 'build-image: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

real_bases=false
if [[ "${1:-}" == "--real-bases" ]]; then
    real_bases=true
    shift
fi
IMAGE="${1:-localhost/payments-authorization:dev}"

[[ "$(id -u)" == 0 ]] || die "needs root (buildah's storage, mmdebstrap and mounts); run it with sudo"
for tool in buildah mmdebstrap; do
    command -v "$tool" >/dev/null || die "$tool is not installed: apt-get install -y buildah mmdebstrap"
done

java_version() {
    awk -F'"' '/^JAVA_RUNTIME_VERSION=/ {print $2}' "$1/release" 2>/dev/null
}

find_jdk25() {
    local candidate
    for candidate in "${IMAGE_STANDIN_JDK:-}" "${JAVA_HOME:-}" /usr/lib/jvm/*; do
        if [[ -n "$candidate" && -x "$candidate/bin/jlink" && "$(java_version "$candidate")" == 25[.+]* ]]; then
            echo "$candidate"
            return
        fi
    done
    die "no JDK 25 found (JAVA_HOME, /usr/lib/jvm/*); set IMAGE_STANDIN_JDK to one"
}

image_exists() {
    buildah inspect --type image "$1" >/dev/null 2>&1
}

# Runs mmdebstrap into a fresh scratch container, lets "$2" add to the root filesystem, then commits it as "$1", the
# stand-in for the public image "$3". $2 is called with the mounted root; the remaining arguments go to mmdebstrap.
make_standin() {
    local name="$1" customize="$2" real="$3" container root
    shift 3
    container="$(buildah from scratch)"
    root="$(buildah mount "$container")"
    if ! { mmdebstrap --variant=minbase --quiet "$@" "$DEBIAN_SUITE" "$root" "$DEBIAN_MIRROR" && "$customize" "$root"; }
    then
        buildah rm "$container" >/dev/null
        die "could not build the stand-in $name"
    fi
    buildah umount "$container" >/dev/null
    buildah config --env JAVA_HOME=/opt/java/openjdk \
        --env PATH=/opt/java/openjdk/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        --env LANG=C.UTF-8 --env "JAVA_VERSION=jdk-$JDK_VERSION" \
        --label "org.opencontainers.image.description=LOCAL STAND-IN for $real, built by scripts/build-image.sh from \
Debian $DEBIAN_SUITE and $JDK (the public registry is unreachable here)" \
        "$container"
    buildah commit --quiet --rm "$container" "$name" >/dev/null
    log "stand-in $name ready"
}

add_jre() {
    local modules
    modules="$("$JDK/bin/java" --list-modules | sed 's/@.*//' \
        | grep -vxF -f <(printf '%s\n' "${JRE_EXCLUDED_MODULES[@]}") | paste -sd, -)"
    mkdir -p "$1/opt/java"
    # --generate-cds-archive: the default CDS archive a Temurin JRE ships, so "without the AOT cache" is a fair baseline.
    "$JDK/bin/jlink" --add-modules "$modules" --strip-debug --no-man-pages --no-header-files --generate-cds-archive \
        --output "$1/opt/java/openjdk" 2>&1 | grep -v 'incubator' >&2 || true
    [[ -x "$1/opt/java/openjdk/bin/java" && ! -e "$1/opt/java/openjdk/bin/javac" ]]
}

add_jdk() {
    mkdir -p "$1/opt/java"
    cp -a "$JDK" "$1/opt/java/openjdk"
    # The build downloads from Maven Central through this machine's network, which may inspect TLS with its own
    # certificate authority: the build stand-in trusts what this JDK trusts here (Debian's JDKs link cacerts to the
    # system store). The real base trusts the public authorities only.
    cp --remove-destination -L "$JDK/lib/security/cacerts" "$1/opt/java/openjdk/lib/security/cacerts"
    # Maven's directory is /mnt, where the build bind-mounts the host's: /mnt exists in every base, so the bind mount,
    # which the build also applies to the runtime stage's RUN, leaves no mount-point directory in the image.
    ln -s /mnt "$1/root/.m2"
}

build_args=()
if ! $real_bases; then
    JDK="$(find_jdk25)"
    JDK_VERSION="$(java_version "$JDK")"
    tag_version="${JDK_VERSION//+/_}"
    RUNTIME_STANDIN="localhost/payments-authorization-stand-in/eclipse-temurin:${tag_version}-jre-$DEBIAN_SUITE-r$STANDIN_RECIPE"
    BUILD_STANDIN="localhost/payments-authorization-stand-in/maven:3-${tag_version}-$DEBIAN_SUITE-r$STANDIN_RECIPE"
    log "STAND-IN BASES: Docker Hub is unreachable here, so the Dockerfile builds on local stand-ins for its bases"
    log "  runtime eclipse-temurin:25-jre          -> $RUNTIME_STANDIN (Debian minbase + jlink JRE of $JDK)"
    log "  build   maven:3.9-eclipse-temurin-25    -> $BUILD_STANDIN (Debian minbase + Debian's Maven + $JDK)"
    log "  With registry access the same Dockerfile builds on the real bases: $0 --real-bases, or docker build ."
    # One machine, one set of stand-ins: a second build started meanwhile waits instead of making them twice.
    exec 9>/run/lock/payments-authorization-stand-ins.lock
    flock 9
    image_exists "$RUNTIME_STANDIN" \
        || make_standin "$RUNTIME_STANDIN" add_jre "eclipse-temurin:25-jre"
    image_exists "$BUILD_STANDIN" \
        || make_standin "$BUILD_STANDIN" add_jdk "maven:3.9-eclipse-temurin-25" --include=maven,ca-certificates
    flock -u 9
    build_args=(--build-arg "BUILD_IMAGE=$BUILD_STANDIN" --build-arg "RUNTIME_IMAGE=$RUNTIME_STANDIN")
fi

# The build stand-in's ~/.m2 is /mnt (see add_jdk): bind the host's Maven directory there.
volumes=()
maven_dir="${IMAGE_MAVEN_DIR-$HOME/.m2}"
if ! $real_bases && [[ -n "$maven_dir" && -d "$maven_dir" ]]; then
    volumes=(--volume "$maven_dir:/mnt")
fi

# The OCI labels and the app_build_info gauge (the build context has no .git): the pom's version, the commit and where
# it came from (unknown outside a git checkout).
version="$(sed -n 's|^    <version>\(.*\)</version>$|\1|p' "$ROOT/pom.xml" | head -1)"
revision="$(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)"
source_url="$(git -C "$ROOT" config --get remote.origin.url 2>/dev/null || true)"
[[ "$source_url" =~ ^(https://|git@) ]] || source_url=unknown   # a local clone's path names no public source
build_args+=(--build-arg "VERSION=${version:-unversioned}" --build-arg "REVISION=$revision" \
             --build-arg "SOURCE=$source_url")

log "building $IMAGE with buildah (chroot isolation: the build shares this machine's network)"
# --pull=never with the stand-ins: they exist only in local storage, and a pull attempt would time out.
# --layers keeps each step's result as `docker build` does, so a build whose pom.xml did not change reuses the
# dependency layer (go-offline: some 25 CPU-s) instead of resolving every plugin again; a changed input reruns its step.
buildah bud --isolation chroot --layers --pull="$($real_bases && echo true || echo never)" "${build_args[@]}" \
    "${volumes[@]}" --file "$ROOT/Dockerfile" --tag "$IMAGE" "$ROOT"
log "built $IMAGE"
