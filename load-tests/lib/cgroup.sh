# shellcheck shell=bash
# CPU limits for load-test processes, the way a Kubernetes pod's CPU limit works (a CFS quota per period): each group
# of processes in a cgroup of its own, under one parent cgroup made for the scenario and removed on exit. Sourced by
# load-tests/rolling-restart/run.sh. Needs write access to the cgroup hierarchy (root).
#
# cgroup v1: the cpu controller's hierarchy (/sys/fs/cgroup/cpu or cpu,cpuacct): cpu.cfs_quota_us / cpu.cfs_period_us,
#   throttling in cpu.stat (nr_periods, nr_throttled, throttled_time in ns); CPU time used from cpuacct.usage (ns)
#   when the cpuacct controller is mounted (with cpu or on its own hierarchy, then a twin group is made there).
# cgroup v2: the unified hierarchy when it has the cpu controller: cpu.max ("quota period"), cpu.stat (usage_usec,
#   nr_periods, nr_throttled, throttled_usec); the parent is made under this shell's own cgroup, else beside it, with
#   the cpu controller enabled in the cgroup.subtree_control above it and in its own (a cgroup that holds processes
#   and is not the root cannot enable it for its children: then it says why and makes nothing).
# Period 100 ms, as the kubelet sets it: a limit of 0.3 CPU lets the group run 30 ms per 100 ms, summed over all its
# threads, and then stops it (throttles) until the next period.
#
# cg_lt_init NAME           finds the hierarchy and creates the parent NAME-<pid>; sets CG_LT_VERSION (v1 | v2);
#                           returns 1 and sets CG_LT_WHY when there is none it can use (nothing is created then)
# cg_lt_create GROUP CPUS   a child group limited to CPUS cores (0.3 = 30 ms per 100 ms period; 0 or empty: no limit)
# cg_lt_exec GROUP          sets CG_LT_EXEC, a command prefix: "${CG_LT_EXEC[@]}" CMD ... runs CMD inside GROUP (the
#                           prefix moves itself into the group, then execs CMD: same PID, every thread inside)
# cg_lt_move GROUP PID...   moves running processes (every thread) into GROUP; children forked later stay inside
# cg_lt_stat GROUP          one JSON object: cpus, nr_periods, nr_throttled, throttled_ms, usage_ms (null: unknown)
# cg_lt_remove GROUP        removes a group whose processes have exited
# cg_lt_cleanup             removes every group and the parent (processes left inside move to the top first)

CG_LT_VERSION=""
CG_LT_WHY=""
CG_LT_CPU=""        # the parent's directory in the cpu hierarchy (v1) or the unified one (v2)
CG_LT_ACCT=""       # v1 with cpuacct on a hierarchy of its own: the parent's twin there
CG_LT_V2_ENABLED="" # v2: the cgroup whose subtree_control got +cpu from us (turned off again on cleanup)
declare -ga CG_LT_GROUPS=()
declare -gA CG_LT_CPUS=()

# cg_lt_mount TYPE [OPTION]: the mount point of the first cgroup (v1, with OPTION among its options) or cgroup2 mount
cg_lt_mount() {
  awk -v t="$1" -v o="${2:-}" '$3 == t {
      n = split($4, opts, ","); for (i = 1; i <= n; i++) if (o == "" || opts[i] == o) { print $2; exit } }' /proc/mounts
}

cg_lt_init() {
  local name="$1-$$" cpu acct top rel
  cpu=$(cg_lt_mount cgroup cpu)
  if [ -n "$cpu" ] && [ -f "$cpu/cpu.cfs_quota_us" ]; then
    if ! mkdir -p "$cpu/$name" 2>/dev/null; then
      CG_LT_WHY="cgroup v1 cpu hierarchy at $cpu is not writable (run as root)"
      return 1
    fi
    CG_LT_VERSION=v1
    CG_LT_CPU="$cpu/$name"
    acct=$(cg_lt_mount cgroup cpuacct)
    if [ -n "$acct" ] && [ "$acct" != "$cpu" ] && mkdir -p "$acct/$name" 2>/dev/null; then CG_LT_ACCT="$acct/$name"; fi
    return 0
  fi
  top=$(cg_lt_mount cgroup2)
  if [ -z "$top" ] || ! grep -qw cpu "$top/cgroup.controllers" 2>/dev/null; then
    CG_LT_WHY="no cgroup v1 cpu hierarchy, and no cgroup v2 hierarchy with the cpu controller (mount | grep cgroup)"
    return 1
  fi
  rel=$(sed -n 's/^0:://p' /proc/self/cgroup)
  rel=${rel%/}
  # Under this shell's own cgroup (in a container with a cgroup namespace: /), else beside it: the cpu controller can
  # be handed down only by a cgroup without processes of its own (or the root).
  local base why=""
  for base in "$top$rel" "$top$(dirname "${rel:-/}")"; do
    base=${base%/}
    if ! mkdir -p "$base/$name" 2>/dev/null; then
      why="cgroup v2 hierarchy at $base is not writable (run as root)"
      continue
    fi
    if ! grep -qw cpu "$base/cgroup.subtree_control" 2>/dev/null; then
      echo +cpu >"$base/cgroup.subtree_control" 2>/dev/null && CG_LT_V2_ENABLED=$base
    fi
    if echo +cpu >"$base/$name/cgroup.subtree_control" 2>/dev/null; then
      CG_LT_VERSION=v2
      CG_LT_CPU="$base/$name"
      return 0
    fi
    rmdir "$base/$name" 2>/dev/null || true
    if [ -n "$CG_LT_V2_ENABLED" ]; then echo -cpu >"$base/cgroup.subtree_control" 2>/dev/null || true; fi
    CG_LT_V2_ENABLED=""
    why="cannot enable the cpu controller below $base (a cgroup v2 with processes of its own cannot hand it down)"
  done
  CG_LT_WHY=$why
  return 1
}

cg_lt_create() {
  local group=$1 cpus=${2:-0} quota
  mkdir -p "$CG_LT_CPU/$group"
  [ -z "$CG_LT_ACCT" ] || mkdir -p "$CG_LT_ACCT/$group"
  CG_LT_GROUPS+=("$group")
  CG_LT_CPUS[$group]=$cpus
  quota=$(awk -v c="$cpus" 'BEGIN { printf "%d", c * 100000 }')
  if [ "$CG_LT_VERSION" = v1 ]; then
    echo 100000 >"$CG_LT_CPU/$group/cpu.cfs_period_us"
    if [ "$quota" -gt 0 ]; then echo "$quota" >"$CG_LT_CPU/$group/cpu.cfs_quota_us"; fi
  elif [ "$quota" -gt 0 ]; then
    echo "$quota 100000" >"$CG_LT_CPU/$group/cpu.max"
  fi
}

cg_lt_exec() {
  # shellcheck disable=SC2016  # expanded by the sh that runs it
  CG_LT_EXEC=(sh -c 'echo $$ >"$1" && { [ -z "$2" ] || echo $$ >"$2"; } && shift 2 && exec "$@"' cg-lt-exec
    "$CG_LT_CPU/$1/cgroup.procs" "${CG_LT_ACCT:+$CG_LT_ACCT/$1/cgroup.procs}")
}

cg_lt_move() {
  local group=$1 pid
  shift
  for pid in "$@"; do
    echo "$pid" >"$CG_LT_CPU/$group/cgroup.procs" 2>/dev/null || continue   # gone meanwhile
    [ -z "$CG_LT_ACCT" ] || echo "$pid" >"$CG_LT_ACCT/$group/cgroup.procs" 2>/dev/null || true
  done
}

cg_lt_stat() {
  local dir="$CG_LT_CPU/$1" usage=""
  if [ "$CG_LT_VERSION" = v1 ]; then
    if [ -f "$dir/cpuacct.usage" ]; then usage=$(cat "$dir/cpuacct.usage")
    elif [ -n "$CG_LT_ACCT" ]; then usage=$(cat "$CG_LT_ACCT/$1/cpuacct.usage" 2>/dev/null || true); fi
  fi
  awk -v v="$CG_LT_VERSION" -v g="$1" -v cpus="${CG_LT_CPUS[$1]:-0}" -v usage="$usage" '
    { s[$1] = $2 }
    END {
      if (v == "v1") { thr = s["throttled_time"] / 1e6; use = usage == "" ? "null" : sprintf("%.1f", usage / 1e6) }
      else { thr = s["throttled_usec"] / 1e3; use = sprintf("%.1f", s["usage_usec"] / 1e3) }
      printf "{\"group\": \"%s\", \"cpus\": %s, \"nr_periods\": %d, \"nr_throttled\": %d, \"throttled_ms\": %.1f, \"usage_ms\": %s}\n",
        g, cpus + 0, s["nr_periods"], s["nr_throttled"], thr, use }' "$dir/cpu.stat"
}

# cg_lt_empty DIR: moves whatever still runs in DIR to the hierarchy's top, so that DIR can go
cg_lt_empty() {
  local top=$2 pid
  [ -f "$1/cgroup.procs" ] || return 0
  while read -r pid; do echo "$pid" >"$top/cgroup.procs" 2>/dev/null || true; done <"$1/cgroup.procs"
}

cg_lt_remove() {
  local dir kept=()
  for dir in "$CG_LT_CPU" ${CG_LT_ACCT:+"$CG_LT_ACCT"}; do
    [ ! -d "$dir/$1" ] || rmdir "$dir/$1" 2>/dev/null || return 1
  done
  for dir in "${CG_LT_GROUPS[@]}"; do [ "$dir" = "$1" ] || kept+=("$dir"); done
  CG_LT_GROUPS=("${kept[@]}")
}

cg_lt_cleanup() {
  [ -n "$CG_LT_VERSION" ] || return 0
  local group dir
  for dir in "$CG_LT_CPU" ${CG_LT_ACCT:+"$CG_LT_ACCT"}; do
    for group in "${CG_LT_GROUPS[@]}"; do
      [ -d "$dir/$group" ] || continue
      cg_lt_empty "$dir/$group" "$(dirname "$dir")"
      rmdir "$dir/$group" 2>/dev/null || echo "could not remove cgroup $dir/$group" >&2
    done
    rmdir "$dir" 2>/dev/null || echo "could not remove cgroup $dir" >&2
  done
  if [ -n "$CG_LT_V2_ENABLED" ]; then echo -cpu >"$CG_LT_V2_ENABLED/cgroup.subtree_control" 2>/dev/null || true; fi
  CG_LT_VERSION=""
}
