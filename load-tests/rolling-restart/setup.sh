# shellcheck shell=bash
# The staging-like setup of rolling-restart/run.sh (sourced by it; its header documents the settings): the shutdown
# budgets of a config file, the store (PostgreSQL, Redis in front of PostgreSQL, or none), and the cgroups that limit
# the CPU of the store and of each instance.
#
# rr_shutdown_config FILE     sets LT_PRE_DRAIN, LT_DRAIN_TIMEOUT, LT_CLEANUP_TIMEOUT, LT_METRICS_LINGER and
#                             LT_HARD_DEADLINE from FILE's shutdown section (the application.yaml default for a key
#                             FILE lacks), each unless already set; before lib.sh is sourced. "none": nothing.
# rr_cgroups_init             the parent cgroup (when INSTANCE_CPU or STORE_CPU is a limit); RR_CGROUPS says how
# rr_store_start              starts STORE in its cgroup; appends the service's -D options to LT_JAVA_OPTS
# rr_aot_train                the AOT cache of the image (AOT=1): one training run of an instance, as the Dockerfile
#                             makes it; every instance started afterwards uses it (LT_JAVA_OPTS)
# rr_cgroups_snapshot LABEL   appends every cgroup's cpu.stat and the machine's CPU counters to the run's
#                             cgroups.jsonl (the report subtracts one label's from another's)
# lt_before_instance SLOT     (called by lib.sh's lt_start_instance) a new cgroup for the instance about to start
# rr_cgroups_drop_instances   removes the cgroups of instances that have exited (after lt_stop_all)
# rr_surge_reserve_start      (SURGE_RESERVE=1 with CPU limits) a process that spends INSTANCE_CPU in a cgroup of
#                             its own, the CPU a replacement will take; rr_surge_reserve_pause / _resume hand that CPU
#                             to the replacement during a roll and take it back after; rr_surge_reserve_stop ends it

RR_SHUTDOWN_KEYS="pre-drain-delay:LT_PRE_DRAIN drain-timeout:LT_DRAIN_TIMEOUT cleanup-timeout:LT_CLEANUP_TIMEOUT
metrics-linger:LT_METRICS_LINGER hard-deadline:LT_HARD_DEADLINE warm-up.timeout:LT_WARMUP_TIMEOUT"
RR_SHUTDOWN_SOURCES=""   # key=value(source) for run.json: where each value the instances run with came from

rr_shutdown_config() {
  local file=$1 root pair key var value values origin
  [ "$file" != none ] || return 0
  root="$(cd "$HERE/../.." && pwd)"
  [ "${file#/}" != "$file" ] || file="$root/$file"
  [ -f "$file" ] || { echo "SHUTDOWN_CONFIG: no file $file" >&2; exit 2; }
  # the shutdown section's "key: value" lines (plain YAML scalars), defaults first, the file's values over them
  values="$(/usr/bin/python3 - "$root/src/main/resources/application.yaml" "$file" <<'PYEOF'
import re, sys
out = {}
for path in sys.argv[1:]:
    section = None
    for line in open(path):
        top = re.match(r"^([A-Za-z][\w-]*):", line)
        if top:
            section = top.group(1)
        elif section in ("shutdown", "warm-up"):
            m = re.match(r"^  ([a-z-]+):\s*([^\s#]+)", line)
            if m:
                key = m.group(1) if section == "shutdown" else section + "." + m.group(1)
                out[key] = (m.group(2), path)
for key, (value, path) in out.items():
    print("%s %s %s" % (key, value, "default" if path == sys.argv[1] else "config"))
PYEOF
)"
  for pair in $RR_SHUTDOWN_KEYS; do
    key=${pair%%:*}
    var=${pair#*:}
    read -r _ value origin <<<"$(grep "^$key " <<<"$values" || true)"
    [ -n "${value:-}" ] || { echo "SHUTDOWN_CONFIG: no shutdown.$key in $file or application.yaml" >&2; exit 2; }
    if [ -n "${!var:-}" ]; then
      origin="$var"
    else
      printf -v "$var" '%s' "$value"
      [ "$origin" = default ] && origin="application.yaml default" || origin="${file#"$root"/}"
    fi
    RR_SHUTDOWN_SOURCES="$RR_SHUTDOWN_SOURCES${RR_SHUTDOWN_SOURCES:+, }\"$key\": [\"${!var}\", \"$origin\"]"
  done
}

# ---- cgroups ----
RR_CGROUPS=""            # v1 | v2 | none (why)
RR_INSTANCE_STARTS=0
declare -A RR_GROUP_ROLE=()   # cgroup -> "store" or "sN" (the slot of the instance in it)

rr_is_limit() { awk -v c="${1:-0}" 'BEGIN { exit !(c > 0) }'; }

rr_cgroups_init() {
  # shellcheck source=../lib/cgroup.sh
  source "$LT_DIR/lib/cgroup.sh"
  if ! rr_is_limit "$INSTANCE_CPU" && ! rr_is_limit "$STORE_CPU"; then
    RR_CGROUPS="none (INSTANCE_CPU and STORE_CPU 0)"
    return 0
  fi
  if cg_lt_init payments-lt-rolling-restart; then
    RR_CGROUPS=$CG_LT_VERSION
    LT_FINAL_HOOKS+=(cg_lt_cleanup)
    lt_log "cgroups ($CG_LT_VERSION): $CG_LT_CPU; instances ${INSTANCE_CPU} CPU each, store ${STORE_CPU} CPU"
  elif [ "$LT_SMOKE" = 1 ]; then   # a smoke run (CI, any user) goes on without limits
    RR_CGROUPS="none ($CG_LT_WHY)"
    lt_log "no CPU limits: $CG_LT_WHY"
  else
    lt_log "CPU limits asked for (INSTANCE_CPU=$INSTANCE_CPU STORE_CPU=$STORE_CPU), but: $CG_LT_WHY"
    exit 2
  fi
}

lt_before_instance() {
  [ -n "${CG_LT_VERSION:-}" ] && rr_is_limit "$INSTANCE_CPU" || return 0
  RR_INSTANCE_STARTS=$((RR_INSTANCE_STARTS + 1))
  local group="s$1-$RR_INSTANCE_STARTS"
  cg_lt_create "$group" "$INSTANCE_CPU"
  RR_GROUP_ROLE[$group]="s$1"
  cg_lt_exec "$group"
  LT_INSTANCE_PREFIX=("${CG_LT_EXEC[@]}")
  LT_INSTANCE_NOTE="cgroup=$group"
}

rr_cgroups_drop_instances() {
  [ -n "${CG_LT_VERSION:-}" ] || return 0
  local group
  for group in "${CG_LT_GROUPS[@]}"; do
    [ "$group" = store ] || [ "$group" = surge ] || cg_lt_remove "$group" || lt_log "cgroup $group still busy"
  done
}

rr_cgroups_snapshot() {
  local label=$1 group out="$LT_RUN_DIR/cgroups.jsonl" now
  now=$(lt_now_ms)
  if [ -n "${CG_LT_VERSION:-}" ]; then
    for group in "${CG_LT_GROUPS[@]}"; do
      [ -d "$CG_LT_CPU/$group" ] || continue
      printf '{"label": "%s", "t_ms": %s, "role": "%s", %s\n' "$label" "$now" "${RR_GROUP_ROLE[$group]:-}" \
        "$(cg_lt_stat "$group" | sed 's/^{//')" >>"$out"
    done
  fi
  # the machine: CPU time (all CPUs, in USER_HZ ticks) busy and idle (+ iowait), to show what the limits left over
  awk -v l="$label" -v t="$now" '$1 == "cpu" { idle = $5 + $6; busy = 0; for (i = 2; i <= 9; i++) busy += $i
      printf "{\"label\": \"%s\", \"t_ms\": %s, \"group\": \"machine\", \"busy_ticks\": %d, \"idle_ticks\": %d}\n",
        l, t, busy - idle, idle }' /proc/stat >>"$out"
}

lt_on_peak_step() { rr_cgroups_snapshot "step-$1-$2-$3"; }

# ---- the surge's CPU, reserved ----
# A node that runs a Deployment's surge pod gives it CPU of its own; on this one machine every CPU a replacement
# takes (boot, warm-up) is taken from the running instances, the store and the client, so a peak measured without it
# is not held during a roll. The stand-in spends the replacement's CPU while no roll runs (peak search, steady state)
# and stops while a replacement runs. It spends it the way a booting JVM does, on every CPU of the machine at once
# (one busy loop per CPU, the cgroup's quota shared among them), so that the peak search meets the kind of
# competition a roll brings: a single loop spent the same CPU time one CPU at a time, and in a trial at 150 rps the
# running instances failed 922 requests while a replacement booted and warmed up for 15 s (in memory: the database
# was not the cause).
RR_SURGE_PIDS=""

rr_surge_reserve_start() {
  [ "${SURGE_RESERVE:-0}" = 1 ] && [ -n "${CG_LT_VERSION:-}" ] && rr_is_limit "$INSTANCE_CPU" || return 0
  [ -z "$RR_SURGE_PIDS" ] || return 0
  [ -d "$CG_LT_CPU/surge" ] || { cg_lt_create surge "$INSTANCE_CPU"; RR_GROUP_ROLE[surge]=surge; }
  cg_lt_exec surge
  local _
  for _ in $(seq 1 "$(nproc)"); do
    "${CG_LT_EXEC[@]}" sh -c 'while :; do :; done' &
    RR_SURGE_PIDS="$RR_SURGE_PIDS${RR_SURGE_PIDS:+ }$!"
  done
  [ -z "${LT_RUN_DIR:-}" ] || lt_event surge-reserve-start "" "pids=${RR_SURGE_PIDS// /;} cpus=$INSTANCE_CPU"
}

# shellcheck disable=SC2086  # the pids are words
rr_surge_reserve_pause() { [ -z "$RR_SURGE_PIDS" ] || kill -STOP $RR_SURGE_PIDS; }
# shellcheck disable=SC2086
rr_surge_reserve_resume() { [ -z "$RR_SURGE_PIDS" ] || kill -CONT $RR_SURGE_PIDS; }

rr_surge_reserve_stop() {
  [ -n "$RR_SURGE_PIDS" ] || return 0
  local pid
  for pid in $RR_SURGE_PIDS; do
    kill -CONT "$pid" 2>/dev/null || true
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  RR_SURGE_PIDS=""
}

# ---- the AOT cache ----
RR_AOT_DESCRIPTION="none (AOT=0)"

rr_aot_train() {
  [ "$AOT" = 1 ] || return 0
  # the flag, not a trial cache; grep without -q, which could close the pipe before java has written (pipefail)
  if ! "$JAVA_HOME/bin/java" -XX:+PrintFlagsFinal -version 2>/dev/null | grep ' AOTCacheOutput ' >/dev/null; then
    RR_AOT_DESCRIPTION="none: $JAVA_HOME has no AOT cache (JDK 25+)"
    lt_log "AOT=1, but $RR_AOT_DESCRIPTION"
    return 0
  fi
  # Like the image's build: the service boots on the real store, runs its warm-up, is stopped by SIGTERM, and the
  # JVM writes the cache at its exit. Same JVM options as the instances that use it (a cache trained with other
  # flags is refused by the JVM, silently).
  local cache="$LT_RESULTS/app.aot" started word opts=""
  # A cache given already (the smoke's shared one, or a user's) goes: the JVM refuses AOTCache beside AOTCacheOutput.
  for word in $LT_JAVA_OPTS; do [[ "$word" == -XX:AOTCache=* ]] || opts="$opts $word"; done
  LT_JAVA_OPTS="${opts# }"
  lt_new_run aottraining   # no "-": report.py reads every "<variant>-<level>" directory as a run
  started=$(lt_now_ms)
  lt_start_instance 1 graceful -XX:AOTCacheOutput="$cache"
  if ! lt_wait_ready 1 "$READY_TIMEOUT_S"; then
    lt_stop_all
    rr_cgroups_drop_instances
    lt_log "the AOT training run never turned ready (see $LT_RUN_DIR); instances run without a cache"
    RR_AOT_DESCRIPTION="none: the training run never turned ready"
    return 0
  fi
  lt_sigterm 1
  rr_cgroups_drop_instances
  if [ "$LT_EXIT_STATUS" != 0 ] || [ ! -s "$cache" ]; then   # the Dockerfile's build requires both too
    lt_log "the AOT training run exited with status $LT_EXIT_STATUS, cache ${cache}: $( [ -s "$cache" ] && echo written || echo none); instances run without one"
    RR_AOT_DESCRIPTION="none: the training run exited with status $LT_EXIT_STATUS"
    rm -f "$cache"
    return 0
  fi
  LT_JAVA_OPTS="$LT_JAVA_OPTS -XX:AOTCache=$cache"
  RR_AOT_DESCRIPTION="trained once ($(( ($(lt_now_ms) - started) / 1000 )) s: boot, warm-up, SIGTERM), $(( $(stat -c %s "$cache") / 1048576 )) MiB"
  lt_log "AOT cache: $RR_AOT_DESCRIPTION"
}

# ---- the store ----
RR_STORE_DESCRIPTION="in-memory stores in each instance"

rr_store_start() {
  local pg_port=$((LT_BASE_PORT + 90)) redis_port=$((LT_BASE_PORT + 91)) port pid
  [ "$STORE" != memory ] || return 0
  # shellcheck source=../lib/postgres.sh
  source "$LT_DIR/lib/postgres.sh"
  pg_lt_bin >/dev/null || exit 2
  [ "$STORE" != redis ] || { command -v redis-server && command -v redis-cli; } >/dev/null \
    || { lt_log "missing: redis-server, redis-cli (Debian: apt-get install -y redis-server)"; exit 2; }
  for port in $pg_port $redis_port; do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      lt_log "port $port is already in use on 127.0.0.1; set LT_BASE_PORT to another range"
      exit 1
    fi
  done
  if [ -n "${CG_LT_VERSION:-}" ] && rr_is_limit "$STORE_CPU"; then
    cg_lt_create store "$STORE_CPU"
    RR_GROUP_ROLE[store]=store
  fi
  LT_STOP_HOOKS+=(rr_store_stop)
  pg_lt_init "$LT_RESULTS/pgdata" || exit 2
  # (2 replicas + 1 surge) x pool-size 10 = 30 connections, as staging's database section sizes them. A smoke run
  # measures nothing: no fsync there (a busy disk made its few requests wait for the pool).
  local durability=() durable="fsync and synchronous_commit on"
  if [ "$LT_SMOKE" = 1 ]; then
    durability=(-c fsync=off -c synchronous_commit=off -c full_page_writes=off)
    durable="smoke: fsync, synchronous_commit and full_page_writes off"
  fi
  pg_lt_run "$LT_RESULTS/pgdata" "$pg_port" "$LT_RESULTS/postgres.log" -c max_connections=50 "${durability[@]}" \
    || exit 1
  RR_PG_PID=$PG_LT_PID
  LT_PIDS+=("$RR_PG_PID")
  if [ -n "${RR_GROUP_ROLE[store]:-}" ]; then   # the postmaster first: what it forks later stays inside
    cg_lt_move store "$RR_PG_PID"
    for pid in $(ps -o pid= --ppid "$RR_PG_PID"); do cg_lt_move store "$pid"; done
  fi
  pg_lt_prepare "$pg_port"
  RR_STORE_DESCRIPTION="$("$(pg_lt_bin)/postgres" --version) on 127.0.0.1:$pg_port ($durable)"
  local words word
  read -r -a words <<<"$(pg_lt_url "$pg_port")"
  # a shared store needs the secret the replicas fingerprint requests with (config/dev/config.yaml's, as local runs)
  LT_JAVA_OPTS="$LT_JAVA_OPTS -Didempotency.fingerprint-secret=local-development-only-fingerprint-secret"
  if [ "$STORE" = postgres ]; then
    LT_JAVA_OPTS="$LT_JAVA_OPTS ${words[*]}"
  else
    # Redis as the idempotency registry; the authorizations themselves in PostgreSQL behind it (database.*), as
    # staging and prod run with idempotency.store: redis.
    local prefix=()
    if [ -n "${RR_GROUP_ROLE[store]:-}" ]; then cg_lt_exec store; prefix=("${CG_LT_EXEC[@]}"); fi
    "${prefix[@]}" redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no \
      --dir "$LT_RESULTS" --maxmemory-policy noeviction >"$LT_RESULTS/redis.log" 2>&1 &
    RR_REDIS_PID=$!
    LT_PIDS+=("$RR_REDIS_PID")
    local _
    for _ in $(seq 100); do
      [ "$(redis-cli -p "$redis_port" ping 2>/dev/null)" = PONG ] && break
      sleep 0.05
    done
    [ "$(redis-cli -p "$redis_port" ping 2>/dev/null)" = PONG ] \
      || { lt_log "redis-server did not start; see $LT_RESULTS/redis.log"; exit 1; }
    LT_JAVA_OPTS="$LT_JAVA_OPTS -Didempotency.store=redis -Didempotency.redis.uri=redis://127.0.0.1:$redis_port"
    for word in "${words[@]}"; do
      [[ "$word" == -Ddatabase.* ]] && LT_JAVA_OPTS="$LT_JAVA_OPTS $word"
    done
    RR_STORE_DESCRIPTION="$(redis-server --version | cut -d' ' -f1-3) on 127.0.0.1:$redis_port (no persistence, no \
replica) as the idempotency registry, in front of $RR_STORE_DESCRIPTION"
  fi
  lt_log "store: $RR_STORE_DESCRIPTION"
}

# rr_store_stop: Redis (SIGTERM) and an immediate shutdown of PostgreSQL (SIGQUIT: the postmaster ends its backends,
# then itself); its data directory goes (the results keep postgres.log)
rr_store_stop() {
  if [ -n "${RR_REDIS_PID:-}" ]; then kill -TERM "$RR_REDIS_PID" 2>/dev/null || true; wait "$RR_REDIS_PID" 2>/dev/null || true; fi
  if [ -n "${RR_PG_PID:-}" ]; then kill -QUIT "$RR_PG_PID" 2>/dev/null || true; wait "$RR_PG_PID" 2>/dev/null || true; fi
  RR_REDIS_PID=""
  RR_PG_PID=""
  rm -rf "$LT_RESULTS/pgdata"
}
