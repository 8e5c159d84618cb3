#!/usr/bin/env bash
# The POST path at the framework's pace: product POST /v1/authorizations (in-memory, and redis in front of its
# PostgreSQL) against a bare Helidon app that reads the body and answers a fixed 201 (bare POST) and its GET /ping (bare GET), measured in ONE run, in
# interleaved rounds, the server pinned to its own CPU(s) and wrk to others (taskset). Then the in-memory store's idle
# CPU (process CPU time over IDLE_WINDOW s) empty and holding RECORDS records, and a JFR profile of one extra product
# run. Writes load-tests/reports/post-path-<UTC time>.md.
#
# Each measurement starts its own JVM, waits for readiness, warms up (WARMUP) and measures (DURATION); every product
# POST carries a new Idempotency-Key (a full authorization, never a replay). The bare app is compiled here from
# load-tests/post-path/bare/BarePost.java against the product's own target/libs (same Helidon, same JVM).
# Load goes to 127.0.0.1 only; every process the script starts is stopped by its PID when it ends.
#
# Needs: JAVA_HOME (JDK 21+), wrk, redis-server and PostgreSQL 15+ server binaries (the redis contender: Redis is
# the registry in front of a private PostgreSQL, the system of record), curl; installs wrk with apt-get when run as
# root, else says how.
# Knobs: ROUNDS (3), DURATION (15s), WARMUP (30s: pinned to one CPU, C2 takes ~20 s to compile the product's hot
#        path), CONNECTIONS (32), THREADS (1), SERVER_CPUS (0), CLIENT_CPUS (the others), REDIS (1),
#        NO_ACCESS_LOG (1: also the product with access-log.enabled=false), SWEEPER (1), RECORDS (1000000),
#        IDLE_WINDOW (10), PROFILE (1), BARE_GET (1: also bare GET /ping), LOG_FORMAT (json: the ECS layout staging
#        and prod run; text: the developer's terminal layout),
#        JVM_OPTS (-XX:+UseG1GC, the image's; every JVM of the run gets them), FILL_STEP (10s: wrk runs that fill
#        the store for the sweeper), IDLE_SETTLE (15: seconds idle before the sweeper's window).
# SMOKE=1: every contender but the no-access-log one (the product's with one more -D), the sweeper and the profile
#        once, 1 s warm-up and 1 s measured on 4 connections, 200 records, 1 s windows, C1 and the serial collector;
#        one JVM for both bare contenders and one for the sweeper and the profile (recording from its start);
#        the report goes to target/load-tests-smoke/post-path/reports/ (see lib/lib.sh).
set -euo pipefail

cd "$(dirname "$0")/../.."
if [ "${SMOKE:-0}" = 1 ]; then
  ROUNDS=${ROUNDS:-1} WARMUP=${WARMUP:-1s} DURATION=${DURATION:-1s} CONNECTIONS=${CONNECTIONS:-4}
  RECORDS=${RECORDS:-200} IDLE_WINDOW=${IDLE_WINDOW:-1} IDLE_SETTLE=${IDLE_SETTLE:-1} FILL_STEP=${FILL_STEP:-1s}
  # No warm-up before ready in a smoke (up to 3 s of CPU per product start; the bare contenders ignore the key).
  NO_ACCESS_LOG=${NO_ACCESS_LOG:-0} JVM_OPTS=${JVM_OPTS:--XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Dwarm-up.requests=0}
fi
FILL_STEP=${FILL_STEP:-10s}
IDLE_SETTLE=${IDLE_SETTLE:-15}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-15s}
WARMUP=${WARMUP:-30s}
CONNECTIONS=${CONNECTIONS:-32}
THREADS=${THREADS:-1}
CPUS=$(nproc)
SERVER_CPUS=${SERVER_CPUS:-0}
CLIENT_CPUS=${CLIENT_CPUS:-$([ "$CPUS" -gt 1 ] && echo "1-$((CPUS - 1))" || echo 0)}
REDIS=${REDIS:-1}
NO_ACCESS_LOG=${NO_ACCESS_LOG:-1}
SWEEPER=${SWEEPER:-1}
RECORDS=${RECORDS:-1000000}
IDLE_WINDOW=${IDLE_WINDOW:-10}
PROFILE=${PROFILE:-1}
BARE_GET=${BARE_GET:-1}
# The product's log layout: json, the ECS lines staging and prod write (every request access-logged), or text.
LOG_FORMAT=${LOG_FORMAT:-json}
# The image's collector (Dockerfile ENTRYPOINT) for every JVM: pinned to one CPU the JVM would pick the serial one.
read -ra JVM_OPTS <<<"${JVM_OPTS:--XX:+UseG1GC}"
JAVA=${JAVA_HOME:+$JAVA_HOME/bin/}java
JAVAC=${JAVA_HOME:+$JAVA_HOME/bin/}javac
JFR=${JAVA_HOME:+$JAVA_HOME/bin/}jfr
# shellcheck source=../lib/lib.sh
source load-tests/lib/lib.sh
# shellcheck source=../lib/postgres.sh
source load-tests/lib/postgres.sh
# The jar the pom names (target/jar.properties), built first when missing.
lt_ensure_jar
JAR="$(lt_jar)"
HERE=load-tests/post-path
WORK=$(mktemp -d)
PIDS=()
TICKS=$(getconf CLK_TCK)
DEV_KEY='sha256:9702b04ac8da313c8ec0784e54e26e65016c0a9c0942463b0c6fb9f354071ab8 m_123'

lt_ensure_wrk
for tool in "$JAVA" "$JAVAC" curl; do
  command -v "$tool" >/dev/null || { echo "missing: $tool (JAVA_HOME=JDK 21+; apt-get install -y curl)" >&2; exit 2; }
done
if [ "$REDIS" = 1 ] && ! command -v redis-server >/dev/null; then
  echo "missing: redis-server (apt-get install -y redis-server), or REDIS=0" >&2; exit 2
fi
if [ "$REDIS" = 1 ]; then pg_lt_bin >/dev/null || { echo "or REDIS=0" >&2; exit 2; }; fi
PIN_SERVER=(taskset -c "$SERVER_CPUS")
PIN_CLIENT=(taskset -c "$CLIENT_CPUS")
# Not in a smoke run: its numbers mean nothing, and one CPU for every JVM start of it would make it the slowest smoke.
if ! command -v taskset >/dev/null || [ "$CPUS" -lt 2 ] || [ "$LT_SMOKE" = 1 ]; then
  PIN_SERVER=()
  PIN_CLIENT=()
fi
mkdir -p "$WORK/bare"
"$JAVAC" --release 21 -cp "target/libs/*" -d "$WORK/bare" "$HERE/bare/BarePost.java"

cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

free_port() { # below Linux's ephemeral range, so no outgoing connection holds it
  local port
  while :; do
    port=$((20000 + RANDOM % 12000))
    (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null || { echo "$port"; return; }
  done
}

cpu_ticks() { # user + system CPU time of a process, in clock ticks
  awk '{ print $14 + $15 }' "/proc/$1/stat"
}

start_redis() { # sets REDIS_PID and REDIS_PORT; the client's CPUs: the service's CPU stays its own
  mkdir -p "$WORK/redis"
  REDIS_PORT=$(free_port)
  "${PIN_CLIENT[@]}" redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no \
      --dir "$WORK/redis" --maxmemory-policy noeviction >"$WORK/redis.log" 2>&1 &
  REDIS_PID=$!
  PIDS+=("$REDIS_PID")
  for _ in $(seq 100); do
    grep -q "Ready to accept connections" "$WORK/redis.log" && return
    sleep 0.1
  done
  echo "redis-server did not start" >&2; cat "$WORK/redis.log" >&2; exit 1
}

# start_resources: the PostgreSQL system of record behind the Redis registry (required with redis); sets
# RESOURCES_PID and RESOURCES_PORT. On the client's CPUs too (its backends inherit the postmaster's affinity).
start_resources() {
  RESOURCES_PORT=$(free_port)
  rm -rf "$WORK/resources"
  pg_lt_init "$WORK/resources" >&2 || exit 1
  pg_lt_run "$WORK/resources" "$RESOURCES_PORT" "$WORK/resources.log" >&2 || exit 1
  RESOURCES_PID=$PG_LT_PID
  PIDS+=("$RESOURCES_PID")
  [ ${#PIN_CLIENT[@]} = 0 ] || taskset -a -p -c "$CLIENT_CPUS" "$RESOURCES_PID" >/dev/null
  pg_lt_prepare "$RESOURCES_PORT" >&2 || exit 1
}

# start_product <label> [-Dkey=value...]: sets PID, BUSINESS, HEALTH once readiness answers 200
start_product() {
  local label=$1
  shift
  "${PIN_SERVER[@]}" "$JAVA" "${JVM_OPTS[@]}" -Dserver.port=0 -Dhealth-server.port=0 -Didempotency.max-keys=6000000 \
      -Dauth.api-keys="$DEV_KEY" -Didempotency.merchant-quota.max-records=3000000 \
      -Dauthorization.in-memory.max-resources=10000000 \
      -Didempotency.merchant-quota.max-in-flight=100000 -Dlogging.format="$LOG_FORMAT" "$@" -jar "$JAR" \
      >"$WORK/$label.log" 2>&1 &
  PID=$!
  PIDS+=("$PID")
  local line=""
  for _ in $(seq 300); do
    line=$(grep -o "serving business traffic on port [0-9]*, health probes and metrics on port [0-9]*" \
           "$WORK/$label.log" 2>/dev/null || true)
    [ -n "$line" ] && break
    kill -0 "$PID" 2>/dev/null || break   # exited: a configuration it refuses (exit 2) says why in its log
    sleep 0.1
  done
  [ -n "$line" ] || { echo "service ($label) did not start" >&2; cat "$WORK/$label.log" >&2; exit 1; }
  BUSINESS=$(echo "$line" | sed -E 's/.*on port ([0-9]+), health.*/\1/')
  HEALTH=$(echo "$line" | sed -E 's/.*metrics on port ([0-9]+).*/\1/')
  for _ in $(seq 100); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$HEALTH/health/ready")" = 200 ] && return
    sleep 0.1
  done
  echo "service ($label) never ready" >&2; exit 1
}

# start_bare <label>: sets PID, BUSINESS. A smoke run starts the bare app once for both bare contenders (BARE_PID,
# stopped after the rounds): the same app, and a JVM start is most of a smoke run's CPU.
BARE_PID=""
start_bare() {
  local label=$1
  if [ -n "$BARE_PID" ] && kill -0 "$BARE_PID" 2>/dev/null; then
    PID=$BARE_PID BUSINESS=$BARE_PORT
    return
  fi
  "${PIN_SERVER[@]}" "$JAVA" "${JVM_OPTS[@]}" -cp "$WORK/bare:target/libs/*" BarePost 0 >"$WORK/$label.log" 2>&1 &
  PID=$!
  PIDS+=("$PID")
  for _ in $(seq 300); do
    BUSINESS=$(sed -n 's/^bare POST app on port \([0-9]*\)$/\1/p' "$WORK/$label.log")
    if [ -n "$BUSINESS" ]; then
      [ "$LT_SMOKE" = 0 ] || BARE_PID=$PID BARE_PORT=$BUSINESS
      return
    fi
    sleep 0.1
  done
  echo "bare app did not start" >&2; cat "$WORK/$label.log" >&2; exit 1
}

# load <script> <port> <run id> <duration> [path]: wrk on the client CPUs; prints its RESULT line
load() {
  "${PIN_CLIENT[@]}" wrk -t"$THREADS" -c"$CONNECTIONS" -d"$4" -s "$1" "http://127.0.0.1:$2${5:-/}" -- "$3" \
      | grep '^RESULT'
}

# measure <contender> <label>: prints the RESULT line plus cpu_us (server CPU per request, microseconds)
measure() {
  local contender=$1 label=$2 script=load-tests/lib/post-new-keys.lua path=/ redis_pid="" resources_pid=""
  case $contender in
  product) start_product "$label" ;;
  product-no-access-log) start_product "$label" -Daccess-log.enabled=false ;;
  redis)
    start_redis
    redis_pid=$REDIS_PID
    start_resources
    resources_pid=$RESOURCES_PID
    # pg_lt_url's -Didempotency.store=postgres comes first, the redis store after it wins.
    # shellcheck disable=SC2046
    start_product "$label" $(pg_lt_url "$RESOURCES_PORT") -Didempotency.store=redis \
        -Didempotency.fingerprint-secret=load-test-fingerprint-secret \
        -Didempotency.redis.uri="redis://127.0.0.1:$REDIS_PORT" ;;
  bare-post) start_bare "$label" ;;
  bare-get) start_bare "$label"; script=$HERE/get-ping.lua; path=/ping ;;
  esac
  load "$script" "$BUSINESS" "warmup-$label-$RANDOM" "$WARMUP" "$path" >/dev/null
  local before after result
  before=$(cpu_ticks "$PID")
  result=$(load "$script" "$BUSINESS" "$label-$RANDOM" "$DURATION" "$path")
  after=$(cpu_ticks "$PID")
  if [ "$PID" != "$BARE_PID" ]; then
    kill -TERM "$PID"
    wait "$PID" 2>/dev/null || true
  fi
  [ -z "$redis_pid" ] || kill "$redis_pid" 2>/dev/null || true
  if [ -n "$resources_pid" ]; then kill "$resources_pid" 2>/dev/null || true; wait "$resources_pid" 2>/dev/null || true; fi
  local requests
  requests=$(field requests "$result")
  echo "$result cpu_us=$(awk -v t=$((after - before)) -v hz="$TICKS" -v n="$requests" \
                         'BEGIN { printf "%.1f", (n > 0 ? t / hz * 1e6 / n : 0) }')"
}

# idle_window: CPU ms per second of the idle process $PID over IDLE_WINDOW s, after IDLE_SETTLE s of quiet (past the
# fill's leases, PT10S, and their queued expiries, so the window sees an idle process only)
idle_window() {
  sleep "$IDLE_SETTLE"
  local before after
  before=$(cpu_ticks "$PID")
  sleep "$IDLE_WINDOW"
  after=$(cpu_ticks "$PID")
  awk -v t=$((after - before)) -v hz="$TICKS" -v s="$IDLE_WINDOW" 'BEGIN { printf "%.1f", t / hz * 1000 / s }'
}

# idle_cpu <records>: one product process, idle while empty, then filled to at least that many records and idle
# again; prints two lines "<records held> <CPU ms per s>" (empty, then full). With SHARED_PROFILE=1 (a smoke run) the
# process records the profile from its start and stays up for it (PID): one product start instead of two.
JFR_RECORDING=-XX:StartFlightRecording=filename="$WORK/product.jfr",settings=profile
SHARED_PROFILE=0
[ "$LT_SMOKE" = 0 ] || [ "$SWEEPER" = 0 ] || [ "$PROFILE" = 0 ] || SHARED_PROFILE=1
idle_cpu() {
  local records=$1
  if [ "$SHARED_PROFILE" = 1 ]; then
    start_product idle -Xmx8g "$JFR_RECORDING"
  else
    start_product idle -Xmx8g
  fi
  echo "0 $(idle_window)"
  local held=0
  while [ "$held" -lt "$records" ]; do
    load load-tests/lib/post-new-keys.lua "$BUSINESS" "fill-$RANDOM" "$FILL_STEP" >/dev/null
    held=$(curl -s "http://127.0.0.1:$HEALTH/metrics" \
           | sed -n 's/^idempotency_requests_total{.*outcome="new".*} \([0-9.E]*\)$/\1/p' \
           | awk '{ printf "%d", $1 }')
  done
  echo "$held $(idle_window)"
  if [ "$SHARED_PROFILE" = 0 ]; then
    kill -TERM "$PID"
    wait "$PID" 2>/dev/null || true
  fi
}

field() { # field <name> <RESULT line>
  echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"
}

ratio() { # n/a when the base measured nothing (the report then shows the zero rate that failed)
  awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else printf "n/a" }'
}

median() {
  sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

CONTENDERS=(bare-post product)
[ "$BARE_GET" = 1 ] && CONTENDERS=(bare-get "${CONTENDERS[@]}")
[ "$NO_ACCESS_LOG" = 1 ] && CONTENDERS+=(product-no-access-log)
[ "$REDIS" = 1 ] && CONTENDERS+=(redis)
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
ROWS=()
PRODUCT_RATIOS=()
NO_LOG_RATIOS=()
PRODUCT_CPU_RATIOS=()
NO_LOG_CPU_RATIOS=()
REDIS_RATIOS=()
for round in $(seq "$ROUNDS"); do
  declare -A rps=()
  declare -A cpu=()
  n=${#CONTENDERS[@]}
  for i in $(seq 0 $((n - 1))); do # each round starts with the next contender
    contender=${CONTENDERS[$(((i + round - 1) % n))]}
    # Through a file, not $(...): a subshell's processes would escape the cleanup if it failed.
    measure "$contender" "$contender-$round" >"$WORK/result"
    result=$(cat "$WORK/result")
    # A refusal (a full store or quota answers 503 or 429) costs a fraction of an authorization: a run with any is
    # not a measurement of the POST path.
    if [ -z "$result" ]; then
      echo "$contender-$round: wrk printed no RESULT line" >&2
      exit 1
    fi
    if [ "$(field non_201 "$result")" != 0 ]; then
      echo "$contender-$round: $(field non_201 "$result") answers other than 201, so it measured refusals; raise the" \
           "store's bounds in start_product" >&2
      exit 1
    fi
    rps[$contender]=$(field rps "$result")
    cpu[$contender]=$(field cpu_us "$result")
    ROWS+=("$round|$contender|$result")
  done
  PRODUCT_RATIOS+=("$(ratio "${rps[product]}" "${rps[bare-post]}")")
  # CPU per request: bare's over the product's, so that 0.5 reads "the product costs twice the bare app".
  PRODUCT_CPU_RATIOS+=("$(ratio "${cpu[bare-post]}" "${cpu[product]}")")
  [ "$NO_ACCESS_LOG" = 1 ] && NO_LOG_CPU_RATIOS+=("$(ratio "${cpu[bare-post]}" "${cpu[product-no-access-log]}")")
  [ "$NO_ACCESS_LOG" = 1 ] && NO_LOG_RATIOS+=("$(ratio "${rps[product-no-access-log]}" "${rps[bare-post]}")")
  [ "$REDIS" = 1 ] && REDIS_RATIOS+=("$(ratio "${rps[redis]}" "${rps[product]}")")
  unset rps cpu
done
if [ -n "$BARE_PID" ]; then
  kill -TERM "$BARE_PID"
  wait "$BARE_PID" 2>/dev/null || true
fi

IDLE_EMPTY=""
IDLE_FULL=""
if [ "$SWEEPER" = 1 ]; then
  idle_cpu "$RECORDS" >"$WORK/result"
  IDLE_EMPTY=$(sed -n 1p "$WORK/result")
  IDLE_FULL=$(sed -n 2p "$WORK/result")
fi

HOT=""
ALLOC=""
if [ "$PROFILE" = 1 ]; then
  [ "$SHARED_PROFILE" = 1 ] || start_product profile "$JFR_RECORDING"
  load load-tests/lib/post-new-keys.lua "$BUSINESS" "profile-warmup-$RANDOM" "$WARMUP" >/dev/null
  load load-tests/lib/post-new-keys.lua "$BUSINESS" "profile-$RANDOM" "$DURATION" >/dev/null
  jcmd_out=$("${JAVA_HOME:+$JAVA_HOME/bin/}jcmd" "$PID" JFR.dump filename="$WORK/product.jfr" 2>&1 || true)
  kill -TERM "$PID"
  wait "$PID" 2>/dev/null || true
  if [ -s "$WORK/product.jfr" ]; then
    HOT=$("$JFR" view --width 200 hot-methods "$WORK/product.jfr" 2>&1 | head -40)
    # A smoke run reads one view (each `jfr view` is a JVM parsing the whole recording, ~2 s of CPU).
    if [ "$LT_SMOKE" = 0 ]; then
      HOT="$HOT
$("$JFR" view gc-pauses "$WORK/product.jfr" 2>&1 | head -12)"
      ALLOC=$("$JFR" view --width 200 allocation-by-class "$WORK/product.jfr" 2>&1 | head -25)
    fi
  else
    HOT="no recording: $jcmd_out"
  fi
fi

lt_output post-path
REPORT=$LT_REPORTS_DIR/post-path-$(date -u +%Y%m%dT%H%M%SZ).md
{
  echo "# POST path: product vs bare Helidon, sweeper idle CPU"
  echo
  [ "$LT_SMOKE" = 0 ] || { echo "**Smoke run (SMOKE=1): proves the benchmark runs; its numbers mean nothing.**"; echo; }
  echo "Measured $(date -u +%Y-%m-%dT%H:%MZ) by \`load-tests/post-path/run.sh\` on one machine: $CPUS cores,"
  echo "$("$JAVA" -version 2>&1 | head -1)${REDIS:+, $([ "$REDIS" = 1 ] && redis-server --version | cut -d' ' -f1-3)}."
  echo "Server pinned to CPU(s) \`$SERVER_CPUS\`, wrk (and redis-server with its PostgreSQL, the system of record behind it) to \`$CLIENT_CPUS\`$([ ${#PIN_SERVER[@]} = 0 ] && echo ' (not pinned: no taskset, one CPU, or a smoke run)')."
  echo "wrk: $THREADS thread(s), $CONNECTIONS connections, $WARMUP warm-up then $DURATION measured per run, $ROUNDS"
  echo "interleaved rounds, a fresh JVM per run (options: ${JVM_OPTS[*]}). Product: every POST a new Idempotency-Key (claim, rule-based"
  echo "authorizer, decision recorded, key completed), test card 4111111111111111. \`cpu us/req\` = the server"
  echo "process's CPU time during the measured window / requests answered."
  echo "Load average (1/5/15 min) before: $LOAD_BEFORE, after the rounds: $(cut -d' ' -f1-3 /proc/loadavg)."
  echo
  echo "**Median per-round ratio of CPU per request, bare POST / product POST (every request access-logged, $LOG_FORMAT): $(printf '%s\n' "${PRODUCT_CPU_RATIOS[@]}" | median)**"
  [ "$NO_ACCESS_LOG" = 1 ] && echo "**The same without the access log: $(printf '%s\n' "${NO_LOG_CPU_RATIOS[@]}" | median)**"
  echo
  echo "Throughput (requests/s, one server CPU):"
  echo
  echo "**Median per-round ratio product POST / bare POST: $(printf '%s\n' "${PRODUCT_RATIOS[@]}" | median)**"
  [ "$NO_ACCESS_LOG" = 1 ] && echo "**Median per-round ratio product POST without the access log / bare POST: $(printf '%s\n' "${NO_LOG_RATIOS[@]}" | median)**"
  [ "$REDIS" = 1 ] && echo "**Median per-round ratio redis POST / in-memory POST: $(printf '%s\n' "${REDIS_RATIOS[@]}" | median)**"
  echo
  echo "| round | run | requests/s | cpu us/req | p50 ms | p99 ms | max ms | non-2xx | socket errors |"
  echo "|---|---|---|---|---|---|---|---|---|"
  for row in "${ROWS[@]}"; do
    IFS='|' read -r round label result <<<"$row"
    echo "| $round | $label | $(field rps "$result") | $(field cpu_us "$result") | $(field p50_ms "$result") |" \
         "$(field p99_ms "$result") | $(field max_ms "$result") | $(field non_201 "$result") |" \
         "$(field socket_errors "$result") |"
  done
  if [ "$SWEEPER" = 1 ]; then
    echo
    echo "## Sweeper: idle CPU of the in-memory store"
    echo
    echo "One product process (pinned like above): left idle $IDLE_SETTLE s after it started, its CPU time over"
    echo "${IDLE_WINDOW} s (user + system, /proc, ${TICKS} Hz ticks); then filled with new keys by wrk, left idle"
    echo "$IDLE_SETTLE s (past the fill's leases) and measured again. The retention sweeper runs every second throughout."
    echo
    echo "| records held | idle CPU ms/s |"
    echo "|---|---|"
    echo "| ${IDLE_EMPTY%% *} | ${IDLE_EMPTY##* } |"
    echo "| ${IDLE_FULL%% *} | ${IDLE_FULL##* } |"
    echo
    echo "Ratio ${IDLE_FULL%% *} records / empty: $(awk -v a="${IDLE_FULL##* }" -v b="${IDLE_EMPTY##* }" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a (empty: 0 ticks)" }')"
  fi
  if [ "$PROFILE" = 1 ]; then
    echo
    echo "## Profile of one extra product run (JFR, settings=profile; not in the table)"
    echo
    echo '```'
    echo "$HOT"
    echo '```'
    echo
    echo '```'
    echo "$ALLOC"
    echo '```'
  fi
} >"$REPORT"
cat "$REPORT"
