#!/usr/bin/env bash
# POST /v1/authorizations throughput with the redis backend relative to in-memory, measured on this machine.
#
# Runs the packaged jar three times, one backend at a time, against a private redis-server on a free loopback port:
#   in-memory | redis | redis with a replica and idempotency.redis.min-replicas-ack=1 (prod's setting)
# Each run: start, wait for readiness, warm up (WARMUP), measure (DURATION) with wrk, SIGTERM.
# Writes load-tests/reports/redis-vs-in-memory-<UTC time>.md. Load goes to 127.0.0.1 only; everything stops by itself.
#
# Needs: JAVA_HOME (JDK 21+), wrk, redis-server, curl (Debian: apt-get install -y wrk redis-server curl).
# Knobs: DURATION (20s), WARMUP (10s), CONNECTIONS (32), THREADS (1).
set -euo pipefail

cd "$(dirname "$0")/.."
DURATION=${DURATION:-20s}
WARMUP=${WARMUP:-10s}
CONNECTIONS=${CONNECTIONS:-32}
THREADS=${THREADS:-1}
JAVA=${JAVA_HOME:+$JAVA_HOME/bin/}java
JAR=target/payments-authorization.jar
WORK=$(mktemp -d)
PIDS=()

for tool in "$JAVA" wrk redis-server curl; do
  command -v "$tool" >/dev/null || { echo "missing: $tool (apt-get install -y wrk redis-server curl; JAVA_HOME=JDK 21+)" >&2; exit 2; }
done
[ -f "$JAR" ] || mvn -q -B package -DskipTests

cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

free_port() {
  local port
  while :; do
    port=$((20000 + RANDOM % 30000))
    (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null || { echo "$port"; return; }
  done
}

start_redis() { # name port [extra args...]
  local name=$1 port=$2
  shift 2
  mkdir -p "$WORK/$name"
  redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$WORK/$name" \
      --maxmemory-policy noeviction --repl-diskless-sync-delay 0 "$@" >"$WORK/$name.log" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 100); do grep -q "Ready to accept connections" "$WORK/$name.log" && return; sleep 0.1; done
  echo "redis-server $name did not start" >&2; cat "$WORK/$name.log" >&2; exit 1
}

# run <label> [-Dkey=value...]: prints the wrk RESULT line of the measured phase
run() {
  local label=$1
  shift
  "$JAVA" -Dserver.port=0 -Dhealth-server.port=0 -Didempotency.max-keys=2000000 "$@" -jar "$JAR" \
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
  wrk -t"$THREADS" -c"$CONNECTIONS" -d"$WARMUP" -s load-tests/post-new-keys.lua \
      "http://127.0.0.1:$business" -- "warmup-$label-$RANDOM" >/dev/null
  wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" -s load-tests/post-new-keys.lua \
      "http://127.0.0.1:$business" -- "$label-$RANDOM" | grep '^RESULT'
  kill -TERM "$pid"
  wait "$pid" || true
}

field() { # field <name> <RESULT line>
  echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"
}

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
REDIS_PORT=$(free_port)
start_redis primary "$REDIS_PORT"
IN_MEMORY=$(run in-memory)
REDIS=$(run redis -Didempotency.store=redis -Didempotency.redis.uri="redis://127.0.0.1:$REDIS_PORT")
REPLICA_PORT=$(free_port)
start_redis replica "$REPLICA_PORT" --replicaof 127.0.0.1 "$REDIS_PORT"
sleep 1
ACKED=$(run redis-ack1 -Didempotency.store=redis -Didempotency.redis.uri="redis://127.0.0.1:$REDIS_PORT" \
            -Didempotency.redis.min-replicas-ack=1)

mkdir -p load-tests/reports
REPORT=load-tests/reports/redis-vs-in-memory-$(date -u +%Y%m%dT%H%M%SZ).md
base=$(field rps "$IN_MEMORY")
{
  echo "# POST throughput: redis backend relative to in-memory"
  echo
  echo "Measured $(date -u +%Y-%m-%dT%H:%MZ) by \`load-tests/redis-vs-in-memory.sh\` on one machine: $(nproc) cores,"
  echo "$("$JAVA" -version 2>&1 | head -1), $(redis-server --version | cut -d' ' -f1-3)."
  echo "Service, Redis and wrk share those cores. wrk: $THREADS thread(s), $CONNECTIONS connections,"
  echo "$WARMUP warm-up, then $DURATION measured; every request a new Idempotency-Key (a full authorization:"
  echo "claim, authorizer, authorization saved, response stored), test card 4111111111111111."
  echo "Load average (1/5/15 min) before: $LOAD_BEFORE, after: $(cut -d' ' -f1-3 /proc/loadavg); anything else"
  echo "running on the machine shows there and skews all three runs."
  echo
  echo "| backend | requests/s | relative | p50 ms | p90 ms | p99 ms | max ms | non-201 | socket errors |"
  echo "|---|---|---|---|---|---|---|---|---|"
  for row in "in-memory|$IN_MEMORY" "redis|$REDIS" "redis + replica, min-replicas-ack 1|$ACKED"; do
    label=${row%%|*}
    result=${row#*|}
    rps=$(field rps "$result")
    relative=$(awk -v a="$rps" -v b="$base" 'BEGIN { printf "%.2f", a / b }')
    echo "| $label | $rps | $relative | $(field p50_ms "$result") | $(field p90_ms "$result") |" \
         "$(field p99_ms "$result") | $(field max_ms "$result") | $(field non_201 "$result") |" \
         "$(field socket_errors "$result") |"
  done
  echo
  echo "Raw wrk results:"
  echo
  echo '```'
  echo "in-memory  $IN_MEMORY"
  echo "redis      $REDIS"
  echo "redis-ack1 $ACKED"
  echo '```'
} >"$REPORT"
cat "$REPORT"
