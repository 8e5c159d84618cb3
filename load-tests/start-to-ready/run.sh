#!/usr/bin/env bash
# Start-to-ready of the packaged jar, in ONE run, four modes alternating (RUNS starts each):
#   plain            java -jar, warm-up.requests=0
#   warm-up          java -jar with the default warm-up (warm-up.requests synthetic requests before startup completes)
#   aot              -XX:AOTCache=<cache> (JDK 25, JEP 483/514), warm-up.requests=0
#   aot + warm-up    -XX:AOTCache=<cache> with the default warm-up
# The cache is recorded once first by a training run (-XX:AOTCacheOutput, default settings, so the warm-up runs the
# hot path in it; SIGTERM once ready), as the Dockerfile does. Each start is timed from launch to the first 200 of
# GET /health/ready (polled every 10 ms); then wrk sends FIRST_LOAD of POSTs (new keys) and its p50/p99/max say what
# the first clients of a fresh replica get; then SIGTERM (exit 0 expected). Writes
# load-tests/reports/start-to-ready-<UTC time>.md. Loopback only; every process is stopped by its PID.
#
# Every JVM runs as the image's ENTRYPOINT runs it in a prod pod: its flags (G1, the JUL manager, the JVM's own
# logging at warning on stderr) and the heap MaxRAMPercentage=75 gives under prod's 1 GiB memory limit (-Xmx768m;
# without it the JVM sizes its heap from the host's memory, which no pod has).
#
# Needs: JAVA_HOME (JDK 25 for the AOT modes), curl, wrk (installed with apt-get when run as root).
# Knobs: RUNS (5), FIRST_LOAD (2s), CONNECTIONS (8), TRAINING_IDLE (2: seconds the training run stays up once ready),
# POLL (0.01: seconds between readiness polls, each a curl process), START_JVM_OPTS (the pod's flags above; a name of
# its own, so that post-path's JVM_OPTS exported in the same shell does not leak in).
# SMOKE=1: one start per mode, a warm-up of 100 requests, 1 s of first load on 2 connections, the training run stopped
# once ready, readiness polled every 50 ms (100 curl processes a second cost a quarter of a core); the report goes to
# target/load-tests-smoke/start-to-ready/reports/ (see lib/lib.sh); the training run's cache is left at
# target/load-tests-smoke/app.aot for the other smoke scenarios' JVMs.
set -euo pipefail

cd "$(dirname "$0")/../.."
WARM_UP=()   # the default warm-up; a smoke run's is shorter (100 requests: the same path, a third of the CPU)
if [ "${SMOKE:-0}" = 1 ]; then
  RUNS=${RUNS:-1} FIRST_LOAD=${FIRST_LOAD:-1s} CONNECTIONS=${CONNECTIONS:-2} TRAINING_IDLE=${TRAINING_IDLE:-0}
  POLL=${POLL:-0.05}
  WARM_UP=(-Dwarm-up.requests=100)
fi
TRAINING_IDLE=${TRAINING_IDLE:-2}
POLL=${POLL:-0.01}
RUNS=${RUNS:-5}
FIRST_LOAD=${FIRST_LOAD:-2s}
CONNECTIONS=${CONNECTIONS:-8}
JAVA=${JAVA_HOME:+$JAVA_HOME/bin/}java
POD_OPTS="-XX:+ExitOnOutOfMemoryError -Djava.util.logging.manager=org.apache.logging.log4j.jul.LogManager"
POD_OPTS="$POD_OPTS -Xlog:all=off -Xlog:all=warning:stderr"
# The pod's heap and the image's collector, except in a smoke run: its JVMs get the serial collector (lib/lib.sh), and
# its training run's cache goes to the other scenarios' JVMs, whose heap is the JVM's default (a cache trained with
# another heap may not fit them).
[ "${SMOKE:-0}" = 1 ] || POD_OPTS="-Xmx768m -XX:+UseG1GC $POD_OPTS"
read -ra JVM_OPTS <<<"${START_JVM_OPTS:-$POD_OPTS}"
LT_SMOKE_AOT=0   # every start here chooses its own cache, or none
# shellcheck source=../lib/lib.sh
source load-tests/lib/lib.sh
# The jar the pom names (target/jar.properties), built first when missing.
lt_ensure_jar
JAR="$(lt_jar)"
WORK=$(mktemp -d)
PIDS=()
DEV_KEY='sha256:9702b04ac8da313c8ec0784e54e26e65016c0a9c0942463b0c6fb9f354071ab8 m_123'

lt_ensure_wrk
command -v curl >/dev/null || { echo "missing: curl" >&2; exit 2; }
# The flag, not a trial cache: -XX:AOTCacheOutput with -version trains and dumps a cache (~1.4 s of CPU).
"$JAVA" -XX:+PrintFlagsFinal -version 2>/dev/null | grep ' AOTCacheOutput ' >/dev/null \
  || { echo "$JAVA has no AOT cache (JDK 25+ needed): set JAVA_HOME" >&2; exit 2; }

cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

free_port() {
  local port
  while :; do
    port=$((20000 + RANDOM % 12000))
    (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null || { echo "$port"; return; }
  done
}

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# boot <label> [java options...]: starts the jar; sets PID, BUSINESS, HEALTH, and READY (ms from launch to ready)
boot() {
  local label=$1
  shift
  BUSINESS=$(free_port)
  HEALTH=$(free_port)
  while [ "$HEALTH" = "$BUSINESS" ]; do HEALTH=$(free_port); done
  local start
  start=$(now_ms)
  # shellcheck disable=SC2086  # LT_SMOKE_JVM_OPTS: words on purpose
  "$JAVA" "${JVM_OPTS[@]}" $LT_SMOKE_JVM_OPTS "$@" -Dserver.port="$BUSINESS" -Dhealth-server.port="$HEALTH" -Dauth.api-keys="$DEV_KEY" \
      -Didempotency.merchant-quota.max-records=2000000 -Didempotency.max-keys=4000000 \
      -Dauthorization.in-memory.max-resources=4000000 \
      -jar "$JAR" >"$WORK/$label.log" 2>&1 &
  PID=$!
  PIDS+=("$PID")
  local deadline=$(( $(now_ms) + 120000 ))   # generous: a busy 2-core machine takes 30 s and more
  while [ "$(now_ms)" -lt "$deadline" ]; do
    if [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$HEALTH/health/ready" 2>/dev/null)" = 200 ]; then
      READY=$(( $(now_ms) - start ))
      return
    fi
    kill -0 "$PID" 2>/dev/null || break
    sleep "$POLL"
  done
  echo "service ($label) never ready" >&2; cat "$WORK/$label.log" >&2; exit 1
}

stop() { # stop: SIGTERM; sets STATUS to the exit status
  kill -TERM "$PID"
  STATUS=0
  wait "$PID" || STATUS=$?
}

field() { echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }

# The AOT cache: one training run with the default warm-up, stopped once ready (a few seconds of idle service after).
AOT_OK=1
boot training -XX:AOTCacheOutput="$WORK/app.aot" "${WARM_UP[@]}"
sleep "$TRAINING_IDLE"
stop
[ -s "$WORK/app.aot" ] || AOT_OK=0
# A smoke run leaves the cache for the other smoke scenarios' JVMs (lib/lib.sh), renamed into place whole.
if [ "$LT_SMOKE" = 1 ] && [ "$AOT_OK" = 1 ]; then
  mkdir -p "$(dirname "$LT_SMOKE_AOT_CACHE")"
  cp "$WORK/app.aot" "$LT_SMOKE_AOT_CACHE.$$" && mv -f "$LT_SMOKE_AOT_CACHE.$$" "$LT_SMOKE_AOT_CACHE"
fi

# The goals, launch to ready, median of the starts (docs/performance.md, "Measured: start-to-ready").
declare -A GOAL_MS=([plain]=1500 [warm-up]=2000 [aot]=800 [aot+warm-up]=1000)
MODES=(plain warm-up)
[ "$AOT_OK" = 1 ] && MODES+=(aot aot+warm-up)
ROWS=()
for run in $(seq "$RUNS"); do
  n=${#MODES[@]}
  for i in $(seq 0 $((n - 1))); do
    mode=${MODES[$(((i + run - 1) % n))]}
    opts=()
    case $mode in
    plain) opts=(-Dwarm-up.requests=0) ;;
    warm-up) opts=("${WARM_UP[@]}") ;;
    aot) opts=(-XX:AOTCache="$WORK/app.aot" -Dwarm-up.requests=0) ;;
    aot+warm-up) opts=(-XX:AOTCache="$WORK/app.aot" "${WARM_UP[@]}") ;;
    esac
    boot "$mode-$run" "${opts[@]}"
    ready=$READY
    first=$(wrk -t1 -c"$CONNECTIONS" -d"$FIRST_LOAD" -s load-tests/lib/post-new-keys.lua "http://127.0.0.1:$BUSINESS" \
            -- "first-$mode-$run-$RANDOM" | grep '^RESULT')
    stop
    status=$STATUS
    ROWS+=("$mode|$run|$ready|$(field rps "$first")|$(field p50_ms "$first")|$(field p99_ms "$first")|$(field max_ms "$first")|$(field non_201 "$first")|$status")
  done
done

median() {
  sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.1f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
column() { # column <mode> <field index>
  for row in "${ROWS[@]}"; do
    IFS='|' read -ra f <<<"$row"
    if [ "${f[0]}" = "$1" ]; then echo "${f[$2]}"; fi
  done
}

lt_output start-to-ready
REPORT=$LT_REPORTS_DIR/start-to-ready-$(date -u +%Y%m%dT%H%M%SZ).md
{
  echo "# Start-to-ready of the jar: plain, warm-up, AOT cache"
  echo
  [ "$LT_SMOKE" = 0 ] || { echo "**Smoke run (SMOKE=1): proves the benchmark runs; its numbers mean nothing.**"; echo; }
  echo "Measured $(date -u +%Y-%m-%dT%H:%MZ) by \`load-tests/start-to-ready/run.sh\` on one machine: $(nproc) cores (shared),"
  echo "$("$JAVA" -version 2>&1 | head -1); load average before the report: $(cut -d' ' -f1-3 /proc/loadavg)."
  echo "Every JVM as the image runs in a prod pod (1 GiB memory limit): \`${JVM_OPTS[*]}\`."
  echo "$RUNS starts per mode, modes alternating. *ready ms*: launch of \`java\` to the first 200 of \`/health/ready\`."
  echo "*first load*: right after ready, wrk ($CONNECTIONS connections, $FIRST_LOAD) POSTs new keys: what the first"
  echo "clients of a fresh replica get. Warm-up: the defaults (\`warm-up.requests\` 500, \`warm-up.timeout\` PT3S)."
  [ "$AOT_OK" = 1 ] || echo "**No AOT cache was written by the training run (JDK < 25?): AOT modes skipped.**"
  echo
  echo "| mode | median ready ms | goal ms | met | median first-load req/s | median first-load p99 ms | worst first-load max ms |"
  echo "|---|---:|---:|---|---:|---:|---:|"
  for mode in "${MODES[@]}"; do
    ready_ms=$(column "$mode" 2 | median)
    goal=${GOAL_MS[$mode]}
    met=$(awk -v r="$ready_ms" -v g="$goal" 'BEGIN { print (r <= g) ? "yes" : "**no**" }')
    echo "| $mode | $ready_ms | $goal | $met | $(column "$mode" 3 | median) | $(column "$mode" 5 | median) |" \
         "$(column "$mode" 6 | sort -n | tail -1) |"
  done
  echo
  echo "Every start:"
  echo
  echo "| mode | run | ready ms | first-load req/s | p50 ms | p99 ms | max ms | non-201 | exit |"
  echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
  for row in "${ROWS[@]}"; do
    IFS='|' read -ra f <<<"$row"
    echo "| ${f[0]} | ${f[1]} | ${f[2]} | ${f[3]} | ${f[4]} | ${f[5]} | ${f[6]} | ${f[7]} | ${f[8]} |"
  done
} >"$REPORT"
cat "$REPORT"
