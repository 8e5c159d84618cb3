#!/usr/bin/env bash
# POST /v1/authorizations throughput with the redis backend relative to in-memory, measured on this machine.
#
# Each round runs the packaged jar three times, one backend at a time:
#   in-memory | redis | redis with a replica and idempotency.redis.min-replicas-ack=1 (prod's setting)
# Every redis run gets a fresh private redis-server (and replica) on free loopback ports, stopped after the run.
# Each run: start, wait for readiness, warm up (WARMUP), measure (DURATION) with wrk, SIGTERM.
# Rounds interleave the backends so that other load on the machine skews them alike; the report gives each round
# and the median of the per-round ratios. Writes load-tests/reports/redis-vs-in-memory-<UTC time>.md.
# Load goes to 127.0.0.1 only; everything the script starts is stopped when it ends.
#
# Needs: JAVA_HOME (JDK 21+), wrk, redis-server, curl (Debian: apt-get install -y wrk redis-server curl).
# Knobs: ROUNDS (3), DURATION (15s), WARMUP (5s), CONNECTIONS (32), THREADS (1).
set -euo pipefail

cd "$(dirname "$0")/../.."
# shellcheck source=../lib/lib.sh
source load-tests/lib/lib.sh
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-15s}
WARMUP=${WARMUP:-5s}
CONNECTIONS=${CONNECTIONS:-32}
THREADS=${THREADS:-1}
JAVA=${JAVA_HOME:+$JAVA_HOME/bin/}java
WORK=$(mktemp -d)
PIDS=()

for tool in "$JAVA" wrk redis-server curl; do
  command -v "$tool" >/dev/null || { echo "missing: $tool (apt-get install -y wrk redis-server curl; JAVA_HOME=JDK 21+)" >&2; exit 2; }
done
lt_ensure_jar
JAR="$(lt_jar)"

cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

# A port nobody listens on, below Linux's ephemeral range (32768+) so no outgoing connection holds it either.
free_port() {
  local port
  while :; do
    port=$((20000 + RANDOM % 12000))
    (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null || { echo "$port"; return; }
  done
}

# start_redis <name> [extra args...]: sets REDIS_PID and REDIS_PORT; tries another port if the first is taken
start_redis() {
  local name=$1
  shift
  mkdir -p "$WORK/$name"
  for _ in 1 2 3; do
    REDIS_PORT=$(free_port)
    redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no --dir "$WORK/$name" \
        --maxmemory-policy noeviction --repl-diskless-sync-delay 0 "$@" >"$WORK/$name.log" 2>&1 &
    REDIS_PID=$!
    PIDS+=("$REDIS_PID")
    for _ in $(seq 100); do
      grep -q "Ready to accept connections" "$WORK/$name.log" && return
      kill -0 "$REDIS_PID" 2>/dev/null || break
      sleep 0.1
    done
  done
  echo "redis-server $name did not start" >&2; cat "$WORK/$name.log" >&2; exit 1
}

# measure <label> [-Dkey=value...]: prints the wrk RESULT line of the measured phase
measure() {
  local label=$1
  shift
  # The development key (post-new-keys.lua sends it) and a merchant quota above any run's request count.
  "$JAVA" -Dserver.port=0 -Dhealth-server.port=0 -Didempotency.max-keys=2000000 \
      -Dauth.api-keys='sha256:9702b04ac8da313c8ec0784e54e26e65016c0a9c0942463b0c6fb9f354071ab8 m_123' -Didempotency.merchant-quota.max-records=2000000 \
      -Didempotency.merchant-quota.max-in-flight=100000 "$@" -jar "$JAR" \
      >"$WORK/$label.log" 2>&1 &
  local pid=$!
  PIDS+=("$pid")
  local line=""
  for _ in $(seq 300); do
    line=$(grep -o "serving business traffic on port [0-9]*, health probes and metrics on port [0-9]*" \
           "$WORK/$label.log" || true)
    [ -n "$line" ] && break
    sleep 0.1
  done
  [ -n "$line" ] || { echo "service ($label) did not start" >&2; cat "$WORK/$label.log" >&2; exit 1; }
  local business health
  business=$(echo "$line" | sed -E 's/.*on port ([0-9]+), health.*/\1/')
  health=$(echo "$line" | sed -E 's/.*metrics on port ([0-9]+).*/\1/')
  for _ in $(seq 100); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$health/health/ready")" = 200 ] && break
    sleep 0.1
  done
  wrk -t"$THREADS" -c"$CONNECTIONS" -d"$WARMUP" -s load-tests/redis-vs-in-memory/post-new-keys.lua \
      "http://127.0.0.1:$business" -- "warmup-$label-$RANDOM" >/dev/null
  wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" -s load-tests/redis-vs-in-memory/post-new-keys.lua \
      "http://127.0.0.1:$business" -- "$label-$RANDOM" | grep '^RESULT'
  kill -TERM "$pid"
  wait "$pid" || true
}

measure_redis() { # measure_redis <label> <replicas: 0|1> [-Dkey=value...]
  local label=$1 replicas=$2
  shift 2
  local primary_port replica_pid="" primary_pid
  start_redis "$label-primary"
  primary_pid=$REDIS_PID
  primary_port=$REDIS_PORT
  if [ "$replicas" = 1 ]; then
    start_redis "$label-replica" --replicaof 127.0.0.1 "$primary_port"
    replica_pid=$REDIS_PID
    sleep 2 # first sync, then the replica's first acknowledgement (it comes with its once-a-second cron)
  fi
  measure "$label" -Didempotency.store=redis -Didempotency.fingerprint-secret=load-test-fingerprint-secret -Didempotency.redis.uri="redis://127.0.0.1:$primary_port" "$@"
  kill "$primary_pid" ${replica_pid:+"$replica_pid"} 2>/dev/null || true
}

field() { # field <name> <RESULT line>
  echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"
}

ratio() {
  awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'
}

median() {
  sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
ROWS=()
REDIS_RATIOS=()
ACKED_RATIOS=()
for round in $(seq "$ROUNDS"); do
  in_memory=$(measure "in-memory-$round")
  redis=$(measure_redis "redis-$round" 0)
  acked=$(measure_redis "redis-ack1-$round" 1 -Didempotency.redis.min-replicas-ack=1 -Dshutdown.drain-timeout=PT12S -Didempotency.in-flight-lease=PT12S)
  base=$(field rps "$in_memory")
  REDIS_RATIOS+=("$(ratio "$(field rps "$redis")" "$base")")
  ACKED_RATIOS+=("$(ratio "$(field rps "$acked")" "$base")")
  ROWS+=("$round|in-memory|$in_memory|1.00" "$round|redis|$redis|${REDIS_RATIOS[-1]}"
         "$round|redis + replica, min-replicas-ack 1|$acked|${ACKED_RATIOS[-1]}")
done

mkdir -p load-tests/reports
REPORT=load-tests/reports/redis-vs-in-memory-$(date -u +%Y%m%dT%H%M%SZ).md
{
  echo "# POST throughput: redis backend relative to in-memory"
  echo
  echo "Measured $(date -u +%Y-%m-%dT%H:%MZ) by \`load-tests/redis-vs-in-memory/run.sh\` on one machine: $(nproc) cores,"
  echo "$("$JAVA" -version 2>&1 | head -1), $(redis-server --version | cut -d' ' -f1-3)."
  echo "Service, Redis and wrk share those cores. wrk: $THREADS thread(s), $CONNECTIONS connections, $WARMUP warm-up,"
  echo "then $DURATION measured, $ROUNDS rounds; every request a new Idempotency-Key (a full authorization: claim,"
  echo "authorizer, authorization saved, response stored), test card 4111111111111111."
  echo "Load average (1/5/15 min) before: $LOAD_BEFORE, after: $(cut -d' ' -f1-3 /proc/loadavg); whatever else ran"
  echo "on the machine meanwhile shows there."
  echo
  echo "**Median of the per-round ratios to in-memory: redis $(printf '%s\n' "${REDIS_RATIOS[@]}" | median),"
  echo "redis + replica with min-replicas-ack 1 $(printf '%s\n' "${ACKED_RATIOS[@]}" | median).**"
  echo
  echo "| round | backend | requests/s | relative | p50 ms | p90 ms | p99 ms | max ms | non-201 | socket errors |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  for row in "${ROWS[@]}"; do
    IFS='|' read -r round label result relative <<<"$row"
    echo "| $round | $label | $(field rps "$result") | $relative | $(field p50_ms "$result") |" \
         "$(field p90_ms "$result") | $(field p99_ms "$result") | $(field max_ms "$result") |" \
         "$(field non_201 "$result") | $(field socket_errors "$result") |"
  done
} >"$REPORT"
cat "$REPORT"
