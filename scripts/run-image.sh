#!/usr/bin/env bash
# shellcheck disable=SC2317  # cleanup() and forward() run from traps
# Runs a built image the way a Kubernetes pod of k8s/base/deployment.yaml would, without a container engine:
#
#   scripts/run-image.sh [-e KEY=VALUE]... [--tmp DIR] [--pid-file FILE] [--entrypoint PROGRAM] IMAGE [ARG...]
#
# What a container runtime would do, and this script does:
#   - the image's root filesystem (buildah mounts it) is mounted READ-ONLY (readOnlyRootFilesystem: true); /tmp is the
#     only writable path (the pod's emptyDir): a fresh tmpfs, or the host directory DIR with --tmp (made mode 1777, so
#     that a caller can look at what the service wrote there afterwards);
#   - the image's ENTRYPOINT (or PROGRAM; followed by ARG..., or else its CMD: `docker run` semantics) runs as PID 1 of a new PID namespace, as the image's
#     USER (uid:gid, no supplementary groups), in its WorkingDir, with exactly its Env plus the -e variables
#     (`docker run -e`); with its own /proc, a minimal /dev, the host's /sys and /etc/resolv.conf read-only and an
#     /etc/hosts naming localhost;
#   - SIGTERM and SIGINT sent to this script are forwarded to PID 1 (as `docker run` does); a runtime stopping a
#     container sends SIGTERM to PID 1 itself: --pid-file writes PID 1's process id as this host sees it, for `kill`.
# What it does not do: no network namespace (the service binds this host's ports: set them with
# -e JDK_JAVA_OPTIONS='-Dserver.port=0 -Dhealth-server.port=0', or other free ones), no cgroup limits (the JVM sizes
# itself from the whole machine), no seccomp profile, capabilities not dropped beyond what the non-root uid implies.
# The exit status is PID 1's. Needs root, buildah and util-linux's unshare (>= 2.36 for --setuid/--root).
set -euo pipefail

log() { printf 'run-image: %s\n' "$*" >&2; }
die() { log "$*"; exit 125; }

# ---- second stage: inside a private mount namespace (see the end of this file) ----
if [[ "${1:-}" == "--in-mount-namespace" ]]; then
    shift
    rootfs="$1" tmp_source="$2" hosts_file="$3" uid="$4" gid="$5" workdir="$6" env_file="$7"
    shift 7
    mount --bind "$rootfs" "$rootfs"
    mount -o remount,bind,ro "$rootfs"
    # Mount points a runtime would create; on a read-only root they must already exist (buildah's RUN leaves
    # /etc/hosts behind, Debian's base has the directories).
    for dir in tmp dev proc sys etc; do
        [[ -d "$rootfs/$dir" ]] || die "the image has no /$dir to mount on"
    done
    if [[ "$tmp_source" == tmpfs ]]; then
        mount -t tmpfs -o mode=1777,nosuid,nodev,size=64m tmpfs "$rootfs/tmp"
    else
        mount --bind "$tmp_source" "$rootfs/tmp"
    fi
    mount -t tmpfs -o mode=755,nosuid,size=1m tmpfs "$rootfs/dev"
    for node in null zero full random urandom tty; do
        touch "$rootfs/dev/$node"
        mount --bind "/dev/$node" "$rootfs/dev/$node"
    done
    ln -s /proc/self/fd "$rootfs/dev/fd"
    ln -s /proc/self/fd/0 "$rootfs/dev/stdin"
    ln -s /proc/self/fd/1 "$rootfs/dev/stdout"
    ln -s /proc/self/fd/2 "$rootfs/dev/stderr"
    mkdir "$rootfs/dev/shm"
    mount -t tmpfs -o mode=1777,nosuid,nodev,size=64m tmpfs "$rootfs/dev/shm"
    mount --bind /sys "$rootfs/sys"
    mount -o remount,bind,ro "$rootfs/sys"
    for file in hosts resolv.conf; do
        if [[ -f "$rootfs/etc/$file" ]]; then
            source_file="/etc/$file"
            [[ "$file" == hosts ]] && source_file="$hosts_file"
            mount --bind "$source_file" "$rootfs/etc/$file"
            mount -o remount,bind,ro "$rootfs/etc/$file"
        fi
    done
    mapfile -t environment <"$env_file"
    # env -i: exactly the image's environment. unshare --fork: the command becomes PID 1 of the new PID namespace
    # (it execs, no shell in between), after chroot to the image's root, chdir to its WorkingDir and setgid/setuid.
    exec env -i "${environment[@]}" unshare --pid --fork --kill-child --mount-proc --root="$rootfs" --wd="$workdir" \
        --setgid "$gid" --setuid "$uid" -- "$@"
fi

# ---- first stage: read the image's config, mount its root filesystem, start the second stage ----
extra_env=()
tmp_dir=""
pid_file=""
entrypoint_override=""
usage="usage: run-image.sh [-e KEY=VALUE]... [--tmp DIR] [--pid-file FILE] [--entrypoint PROGRAM] IMAGE [ARG...]"
while [[ $# -gt 0 ]]; do
    case "$1" in
        -e|--env) extra_env+=("$2"); shift 2 ;;
        --tmp) tmp_dir="$2"; shift 2 ;;
        --pid-file) pid_file="$2"; shift 2 ;;
        --entrypoint) entrypoint_override="$2"; shift 2 ;;
        --) shift; break ;;
        -*) die "unknown option $1 ($usage)" ;;
        *) break ;;
    esac
done
[[ $# -ge 1 ]] || die "$usage"
image="$1"
shift
[[ "$(id -u)" == 0 ]] || die "needs root (mount and PID namespaces, buildah's storage); run it with sudo"
command -v buildah >/dev/null || die "buildah is not installed: apt-get install -y buildah"

config() {
    buildah inspect --type image --format "$1" "$image"
}
user="$(config '{{.OCIv1.Config.User}}')" || die "no image $image in buildah's storage (scripts/build-image.sh builds it)"
workdir="$(config '{{.OCIv1.Config.WorkingDir}}')"
mapfile -t image_env < <(config '{{range .OCIv1.Config.Env}}{{println .}}{{end}}' | sed '/^$/d')
mapfile -t entrypoint < <(config '{{range .OCIv1.Config.Entrypoint}}{{println .}}{{end}}' | sed '/^$/d')
mapfile -t cmd < <(config '{{range .OCIv1.Config.Cmd}}{{println .}}{{end}}' | sed '/^$/d')
if [[ -n "$entrypoint_override" ]]; then
    entrypoint=("$entrypoint_override")
    cmd=()
fi
if [[ $# -gt 0 ]]; then
    cmd=("$@")
fi
command_line=("${entrypoint[@]}" "${cmd[@]}")
[[ ${#command_line[@]} -gt 0 ]] || die "the image has neither ENTRYPOINT nor CMD"

work="$(mktemp -d)"
container=""
cleanup() {
    if [[ -n "$container" ]]; then
        buildah umount "$container" >/dev/null 2>&1 || true
        buildah rm "$container" >/dev/null 2>&1 || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT
container="$(buildah from --pull-never --quiet "$image")"
rootfs="$(buildah mount "$container")"

# USER is uid[:gid] or names: names resolve in the image's own /etc/passwd and /etc/group, as a runtime does.
user_part="${user%%:*}"
group_part=""
[[ "$user" == *:* ]] && group_part="${user#*:}"
[[ -n "$user_part" ]] || user_part=0
if [[ "$user_part" =~ ^[0-9]+$ ]]; then
    uid="$user_part"
    default_gid="$(awk -F: -v u="$uid" '$3 == u {print $4; exit}' "$rootfs/etc/passwd")"
else
    uid="$(awk -F: -v u="$user_part" '$1 == u {print $3; exit}' "$rootfs/etc/passwd")"
    default_gid="$(awk -F: -v u="$user_part" '$1 == u {print $4; exit}' "$rootfs/etc/passwd")"
    [[ -n "$uid" ]] || die "USER $user_part is not in the image's /etc/passwd"
fi
if [[ -z "$group_part" ]]; then
    gid="${default_gid:-0}"
elif [[ "$group_part" =~ ^[0-9]+$ ]]; then
    gid="$group_part"
else
    gid="$(awk -F: -v g="$group_part" '$1 == g {print $3; exit}' "$rootfs/etc/group")"
    [[ -n "$gid" ]] || die "group $group_part is not in the image's /etc/group"
fi

printf '%s\n' "${image_env[@]}" "${extra_env[@]}" | sed '/^$/d' >"$work/env"
printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$work/hosts"
tmp_source=tmpfs
if [[ -n "$tmp_dir" ]]; then
    mkdir -p "$tmp_dir"
    chmod 1777 "$tmp_dir"
    tmp_source="$(cd "$tmp_dir" && pwd)"
fi

log "$image as PID 1 of a new PID namespace, uid $uid gid $gid, in ${workdir:-/}, read-only root, writable /tmp" \
    "($([[ $tmp_source == tmpfs ]] && echo tmpfs || echo "$tmp_source")): ${command_line[*]}"
unshare --mount -- "$0" --in-mount-namespace "$rootfs" "$tmp_source" "$work/hosts" "$uid" "$gid" "${workdir:-/}" \
    "$work/env" "${command_line[@]}" &
launcher=$!

# PID 1 is the launcher's child whose NSpid ends in 1 (the mount helpers before it are not in a new PID namespace).
pid1=""
for _ in $(seq 1 500); do
    children=()
    # The file is one line without a newline: read fills the array but returns 1.
    [[ ! -r "/proc/$launcher/task/$launcher/children" ]] \
        || read -ra children <"/proc/$launcher/task/$launcher/children" || true
    for child in "${children[@]}"; do
        if awk '/^NSpid:/ {exit !(NF == 3 && $3 == 1)}' "/proc/$child/status" 2>/dev/null; then
            pid1="$child"
        fi
    done
    [[ -n "$pid1" ]] || ! kill -0 "$launcher" 2>/dev/null && break
    sleep 0.02
done
if [[ -n "$pid1" ]]; then
    log "PID 1 of the container is process $pid1 on this host"
    [[ -z "$pid_file" ]] || echo "$pid1" >"$pid_file"
fi

forward() {
    [[ -z "$pid1" ]] || kill -s "$1" "$pid1" 2>/dev/null || true
}
trap 'forward TERM' TERM
trap 'forward INT' INT
while true; do
    status=0
    wait "$launcher" || status=$?
    kill -0 "$launcher" 2>/dev/null || break
done
log "PID 1 exited with status $status"
exit "$status"
