#!/usr/bin/env bash
# POST /v1/authorizations throughput of every idempotency store relative to in-memory, measured on this machine in
# one run.
#
# Each round runs the packaged jar once per backend, one at a time (BACKENDS, default all five):
#   in-memory | redis | redis-ack1: redis with a replica and idempotency.redis.min-replicas-ack=1 |
#   postgres | postgres-sync: postgres with a streaming standby and synchronous_standby_names (COMMIT waits for it)
# and, when listed in BACKENDS, postgres-async-commit: synchronous_commit off, a diagnostic that shows how much of
# postgres's cost is the WAL flush of each COMMIT (never for production: a crash loses the last acknowledged commits);
# postgres-merchants: postgres with the requests spread over MERCHANTS merchants (postgres has one merchant alone);
# postgres-lifecycle: postgres with captures and voids (capture-void.lua: each authorization then captured or voided).
#
# Every postgres run is followed, on the same private PostgreSQL, by pgbench with -c PGBENCH_CLIENTS (default
# database.pool-size 10 x 1 replica, the connections the service had): pgbench/reference.sql, a fixed reference
# authorization (a claim insert, then a decision insert and the claim's update, two durable one-statement
# transactions, no row two transactions share), and pgbench/product.sql, the service's own two statements (claim,
# recording) for one merchant and for MERCHANTS merchants. The report gives the service as a ratio of the reference.
# Every redis and postgres run gets a fresh private server (and replica or standby) on free loopback ports, stopped
# after the run (a redis run also a PostgreSQL of its own: the system of record behind the registry, which every
# authorization is written to): redis-server without persistence; PostgreSQL from initdb with its durable defaults
# (fsync on, synchronous_commit on), never the shared 5432. Each run: start, wait for readiness, warm up (WARMUP), measure
# (DURATION) with wrk, SIGTERM. Rounds interleave the backends so that other load on the machine skews them alike;
# the report gives each round and the median of the per-round ratios. Writes
# load-tests/reports/store-throughput-<UTC time>.md. Load goes to 127.0.0.1 only; everything the script starts is
# stopped when it ends.
#
# Needs: JAVA_HOME (JDK 21+), wrk, curl, redis-server (redis runs), PostgreSQL 15+ server binaries (redis and
# postgres runs; Debian: apt-get install -y wrk curl redis-server postgresql).
# Knobs: BACKENDS ("in-memory redis redis-ack1 postgres postgres-sync"), ROUNDS (3), DURATION (15s), WARMUP (5s),
# CONNECTIONS (32), THREADS (1), MERCHANTS (100), PGBENCH (1: run pgbench after each postgres run; 0: not),
# PGBENCH_DURATION (DURATION), PGBENCH_CLIENTS (10). SMOKE=1: in-memory, redis-ack1 (redis's code plus the replica) and postgres
# once each (postgres-sync's standby costs more than CI's budget for a smoke), 1 s warm-up (a cold JDBC path on a
# busy machine answered nothing within a 1 s window), 1 s measured, 4 connections, C1 and the serial collector; the report
# goes to target/load-tests-smoke/store-throughput/reports/ (see lib/lib.sh).
set -euo pipefail

cd "$(dirname "$0")/../.."
if [ "${SMOKE:-0}" = 1 ]; then
  ROUNDS=${ROUNDS:-1} DURATION=${DURATION:-1s} WARMUP=${WARMUP:-1s} CONNECTIONS=${CONNECTIONS:-4}
  BACKENDS=${BACKENDS:-in-memory redis-ack1 postgres}
  PGBENCH_DURATION=${PGBENCH_DURATION:-1s}
fi
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-15s}
WARMUP=${WARMUP:-5s}
CONNECTIONS=${CONNECTIONS:-32}
THREADS=${THREADS:-1}
BACKENDS=${BACKENDS:-in-memory redis redis-ack1 postgres postgres-merchants postgres-lifecycle postgres-sync}
MERCHANTS=${MERCHANTS:-100}
PGBENCH=${PGBENCH:-1}
PGBENCH_DURATION=${PGBENCH_DURATION:-$DURATION}
PGBENCH_CLIENTS=${PGBENCH_CLIENTS:-10}
WRK_SCRIPT=load-tests/lib/post-new-keys.lua
WRK_ARGS=()
API_KEYS='sha256:9702b04ac8da313c8ec0784e54e26e65016c0a9c0942463b0c6fb9f354071ab8 m_123'
JAVA=${JAVA_HOME:+$JAVA_HOME/bin/}java
# shellcheck source=../lib/lib.sh
source load-tests/lib/lib.sh
# shellcheck source=../lib/postgres.sh
source load-tests/lib/postgres.sh
JAR="$(lt_jar)"
WORK=$(mktemp -d)
PIDS=()

needed=("$JAVA" wrk curl)
case " $BACKENDS " in *" redis"*) needed+=(redis-server) ;; esac
for tool in "${needed[@]}"; do
  command -v "$tool" >/dev/null || { echo "missing: $tool (apt-get install -y wrk curl redis-server postgresql; JAVA_HOME=JDK 21+)" >&2; exit 2; }
done
# Every backend but in-memory needs PostgreSQL: redis is a registry in front of the system of record.
case " $BACKENDS " in *" postgres"*|*" redis"*) pg_lt_bin >/dev/null || exit 2 ;; esac
for backend in $BACKENDS; do
  case "$backend" in
    in-memory|redis|redis-ack1|postgres|postgres-merchants|postgres-lifecycle|postgres-sync|postgres-async-commit) ;;
    *) echo "BACKENDS: unknown backend '$backend' (in-memory redis redis-ack1 postgres postgres-merchants" \
            "postgres-lifecycle postgres-sync postgres-async-commit)" >&2; exit 2 ;; esac
done
[ -f "$JAR" ] || mvn -q -B package -DskipTests

cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

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
  # The development key (post-new-keys.lua sends it), a merchant quota above any run's request count (at most half
  # of max-keys, as startup requires), and a fingerprint secret (the redis and postgres stores refuse to start
  # without one; in-memory gets it too, so every backend computes the same HMAC per request).
  # shellcheck disable=SC2086  # LT_SMOKE_JVM_OPTS: words on purpose
  # shellcheck disable=SC2046  # a smoke's service starts without the warm-up (up to 3 s of CPU each)
  "$JAVA" $LT_SMOKE_JVM_OPTS $([ "$LT_SMOKE" = 1 ] && echo -Dwarm-up.requests=0) -Dserver.port=0 -Dhealth-server.port=0 \
      -Didempotency.max-keys=4000000 -Dauthorization.in-memory.max-resources=4000000 \
      -Didempotency.fingerprint-secret=load-test-fingerprint-secret \
      -Dauth.api-keys="$API_KEYS" -Didempotency.merchant-quota.max-records=2000000 \
      -Didempotency.merchant-quota.max-in-flight=100000 "$@" -jar "$JAR" \
      >"$WORK/$label.log" 2>&1 &
  local pid=$!
  PIDS+=("$pid")
  local line=""
  for _ in $(seq 300); do
    line=$(grep -o "serving business traffic on port [0-9]*, health probes and metrics on port [0-9]*" \
           "$WORK/$label.log" 2>/dev/null || true)
    [ -n "$line" ] && break
    kill -0 "$pid" 2>/dev/null || break   # exited: a configuration it refuses (exit 2) says why in its log
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
  [ "${WARMUP%s}" = 0 ] || wrk -t"$THREADS" -c"$CONNECTIONS" -d"$WARMUP" -s "$WRK_SCRIPT" \
      "http://127.0.0.1:$business" -- "warmup-$label-$RANDOM" "${WRK_ARGS[@]}" >/dev/null
  wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" -s "$WRK_SCRIPT" \
      "http://127.0.0.1:$business" -- "$label-$RANDOM" "${WRK_ARGS[@]}" | grep '^RESULT'
  kill -TERM "$pid"
  wait "$pid" || true
}

measure_redis() { # measure_redis <label> <replicas: 0|1> [-Dkey=value...]
  local label=$1 replicas=$2
  shift 2
  local primary_port replica_pid="" primary_pid resources_port resources_pid
  # The authorizations live in PostgreSQL behind the Redis registry (required with redis): a private one of its own.
  resources_port=$(free_port)
  pg_lt_init "$WORK/$label-resources" >&2 || exit 1
  pg_lt_run "$WORK/$label-resources" "$resources_port" "$WORK/$label-resources.log" >&2 || exit 1
  resources_pid=$PG_LT_PID
  PIDS+=("$resources_pid")
  pg_lt_prepare "$resources_port" >&2 || exit 1
  start_redis "$label-primary"
  primary_pid=$REDIS_PID
  primary_port=$REDIS_PORT
  if [ "$replicas" = 1 ]; then
    start_redis "$label-replica" --replicaof 127.0.0.1 "$primary_port"
    replica_pid=$REDIS_PID
    sleep 2 # first sync, then the replica's first acknowledgement (it comes with its once-a-second cron)
  fi
  # pg_lt_url's -Didempotency.store=postgres comes first, the redis store after it wins.
  # shellcheck disable=SC2046
  measure "$label" $(pg_lt_url "$resources_port") -Didempotency.store=redis \
      -Didempotency.redis.uri="redis://127.0.0.1:$primary_port" "$@"
  kill "$primary_pid" ${replica_pid:+"$replica_pid"} "$resources_pid" 2>/dev/null || true
  wait "$resources_pid" 2>/dev/null || true
  rm -rf "$WORK/$label-resources"
}

measure_postgres() { # measure_postgres <label> <standbys: 0|1> <synchronous_commit> [-Dkey=value...]
  local label=$1 standbys=$2 commit=$3
  shift 3
  local port standby_port primary_pid standby_pid=""
  port=$(free_port)
  pg_lt_init "$WORK/$label-primary" >&2 || exit 1
  pg_lt_run "$WORK/$label-primary" "$port" "$WORK/$label-primary.log" -c "synchronous_commit=$commit" >&2 || exit 1
  primary_pid=$PG_LT_PID
  PIDS+=("$primary_pid")
  pg_lt_prepare "$port" >&2 || exit 1
  if [ "$standbys" = 1 ]; then
    standby_port=$(free_port)
    pg_lt_standby "$port" "$WORK/$label-standby" >&2 || exit 1
    pg_lt_run "$WORK/$label-standby" "$standby_port" "$WORK/$label-standby.log" -c cluster_name=standby1 >&2 || exit 1
    standby_pid=$PG_LT_PID
    PIDS+=("$standby_pid")
    pg_lt_psql "$port" -d postgres -c "ALTER SYSTEM SET synchronous_standby_names = 'standby1'" \
        -c "SELECT pg_reload_conf()" >/dev/null
    for _ in $(seq 100); do
      [ "$(pg_lt_psql "$port" -d postgres -At -c "SELECT sync_state FROM pg_stat_replication")" = sync ] && break
      sleep 0.1
    done
  fi
  # shellcheck disable=SC2046
  measure "$label" $(pg_lt_url "$port") "$@"
  # The same server, right after the service, with the connections it had: the reference and the product's SQL.
  if [ "$PGBENCH" = 1 ] && [ "$standbys" = 0 ]; then
    pgbench_all "$port" "$label" >&2
  fi
  kill "$primary_pid" ${standby_pid:+"$standby_pid"} 2>/dev/null || true
  wait "$primary_pid" ${standby_pid:+"$standby_pid"} 2>/dev/null || true
  rm -rf "$WORK/$label-primary" "$WORK/$label-standby"
}

# pgbench_run <port> <script> [-D var=value]: prints the transactions per second of one pgbench run
pgbench_run() {
  local port=$1 script=$2
  shift 2
  "$(pg_lt_bin)/pgbench" -n -h 127.0.0.1 -p "$port" -U payments_authorization -c "$PGBENCH_CLIENTS" \
      -j "$(( PGBENCH_CLIENTS < $(nproc) ? PGBENCH_CLIENTS : $(nproc) ))" -T "${PGBENCH_DURATION%s}" "$@" \
      -f "load-tests/store-throughput/pgbench/$script" payments 2>&1 \
    | sed -n 's/^tps = \([0-9.]*\) .*/\1/p' | awk '{ printf "%.1f", $1 }'
}

# pgbench_all <port> <label>: the reference, then the product's SQL for one merchant and for MERCHANTS; one line
# "<label> <reference> <product one merchant> <product MERCHANTS>" appended to $WORK/pgbench
pgbench_all() {
  local port=$1 label=$2 reference one many
  pg_lt_psql "$port" -U payments_authorization -d payments -f load-tests/store-throughput/pgbench/reference-schema.sql \
      >/dev/null 2>&1
  reference=$(pgbench_run "$port" reference.sql)
  one=$(pgbench_run "$port" product.sql -D merchants=1)
  many=$(pgbench_run "$port" product.sql -D merchants="$MERCHANTS")
  echo "$label ${reference:-0} ${one:-0} ${many:-0}" >>"$WORK/pgbench"
}

describe() { # describe <backend>: the report's name for it
  case "$1" in
    in-memory) echo "in-memory" ;;
    redis) echo "redis" ;;
    redis-ack1) echo "redis + replica, min-replicas-ack 1" ;;
    postgres) echo "postgres" ;;
    postgres-merchants) echo "postgres, $MERCHANTS merchants" ;;
    postgres-lifecycle) echo "postgres, captures and voids" ;;
    postgres-sync) echo "postgres + synchronous standby" ;;
    postgres-async-commit) echo "postgres, synchronous_commit off (diagnostic only)" ;;
  esac
}

merchant_keys() { # the auth.api-keys entries of pa_lt_merchant_1 .. N (merchants m_lt_1 .. N)
  local i
  for i in $(seq "$MERCHANTS"); do
    echo "sha256:$(printf %s "pa_lt_merchant_$i" | sha256sum | cut -d' ' -f1) m_lt_$i"
  done
}

run_backend() { # run_backend <backend> <round>: prints the RESULT line
  WRK_SCRIPT=load-tests/lib/post-new-keys.lua
  WRK_ARGS=()
  API_KEYS='sha256:9702b04ac8da313c8ec0784e54e26e65016c0a9c0942463b0c6fb9f354071ab8 m_123'
  case "$1" in
    in-memory) measure "in-memory-$2" ;;
    redis) measure_redis "redis-$2" 0 ;;
    redis-ack1) measure_redis "redis-ack1-$2" 1 -Didempotency.redis.min-replicas-ack=1 -Dshutdown.drain-timeout=PT12S \
                    -Didempotency.in-flight-lease=PT12S ;;
    postgres) measure_postgres "postgres-$2" 0 on ;;
    postgres-merchants) API_KEYS=$(merchant_keys) WRK_ARGS=("$MERCHANTS")
                        PGBENCH=0 measure_postgres "postgres-merchants-$2" 0 on ;;
    postgres-lifecycle) WRK_SCRIPT=load-tests/lib/capture-void.lua PGBENCH=0 measure_postgres "postgres-lifecycle-$2" 0 on ;;
    postgres-sync) measure_postgres "postgres-sync-$2" 1 on ;;
    postgres-async-commit) measure_postgres "postgres-async-commit-$2" 0 off ;;
  esac
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

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
ROWS=()
LIFECYCLE=()
declare -A RATIOS=()
declare -A RPS=()
BASELINE=${BACKENDS%% *}
for round in $(seq "$ROUNDS"); do
  base=""
  for backend in $BACKENDS; do
    # Through a file, not $(...): a subshell's servers would escape the cleanup if it failed.
    run_backend "$backend" "$round" >"$WORK/result"
    result=$(cat "$WORK/result")
    [ -n "$base" ] || base=$(field rps "$result")
    relative=$(ratio "$(field rps "$result")" "$base")
    RATIOS[$backend]="${RATIOS[$backend]:-} $relative"
    RPS[$backend-$round]=$(field rps "$result")
    [ "$backend" != postgres-lifecycle ] || LIFECYCLE+=("$round|$result")
    ROWS+=("$round|$(describe "$backend")|$result|$relative")
  done
done

lt_output store-throughput
REPORT=$LT_REPORTS_DIR/store-throughput-$(date -u +%Y%m%dT%H%M%SZ).md
{
  echo "# POST throughput of the idempotency stores relative to $(describe "$BASELINE")"
  echo
  [ "$LT_SMOKE" = 0 ] || { echo "**Smoke run (SMOKE=1): proves the benchmark runs; its numbers mean nothing.**"; echo; }
  echo "Measured $(date -u +%Y-%m-%dT%H:%MZ) by \`load-tests/store-throughput/run.sh\` on one machine: $(nproc) cores,"
  echo "$("$JAVA" -version 2>&1 | head -1)$(command -v redis-server >/dev/null && echo ", $(redis-server --version | cut -d' ' -f1-3)")$(pg_lt_bin >/dev/null 2>&1 && echo ", $("$(pg_lt_bin)/postgres" --version)")."
  echo "Service, stores and wrk share those cores. wrk: $THREADS thread(s), $CONNECTIONS connections, $WARMUP warm-up,"
  echo "then $DURATION measured, $ROUNDS rounds; every request a new Idempotency-Key (a full authorization: claim,"
  echo "authorizer, authorization saved, response stored), test card 4111111111111111. PostgreSQL runs with its durable"
  echo "defaults (fsync on, synchronous_commit on), database.pool-size 10; Redis without persistence, in front of a"
  echo "PostgreSQL of its own that holds the authorizations (required with idempotency.store redis)."
  echo "Load average (1/5/15 min) before: $LOAD_BEFORE, after: $(cut -d' ' -f1-3 /proc/loadavg); whatever else ran"
  echo "on the machine meanwhile shows there."
  echo
  summary=""
  for backend in $BACKENDS; do
    [ "$backend" = "$BASELINE" ] && continue
    # shellcheck disable=SC2086
    summary="$summary${summary:+, }$(describe "$backend") $(printf '%s\n' ${RATIOS[$backend]} | median)"
  done
  echo "**Median of the per-round ratios to $(describe "$BASELINE"): $summary.**"
  echo
  echo "| round | backend | requests/s | relative | p50 ms | p90 ms | p99 ms | max ms | non-201 | socket errors |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  for row in "${ROWS[@]}"; do
    IFS='|' read -r round label result relative <<<"$row"
    echo "| $round | $label | $(field rps "$result") | $relative | $(field p50_ms "$result") |" \
         "$(field p90_ms "$result") | $(field p99_ms "$result") | $(field max_ms "$result") |" \
         "$(field non_201 "$result") | $(field socket_errors "$result") |"
  done
  if [ -s "$WORK/pgbench" ]; then
    echo
    echo "## The service as a ratio of pgbench on the same PostgreSQL"
    echo
    echo "Right after each postgres run, on its server: pgbench -c $PGBENCH_CLIENTS (the service's pool), $PGBENCH_DURATION"
    echo "each. Reference: \`pgbench/reference.sql\` (claim insert; decision insert + claim update; durable; no shared"
    echo "row), in authorizations per second. Product SQL: \`pgbench/product.sql\`, the service's claim and recording."
    echo
    echo "| round | reference (pgbench) | product SQL, one merchant | product SQL, $MERCHANTS merchants |" \
         "service, one merchant | service / reference | service, $MERCHANTS merchants | its ratio |"
    echo "|---|---|---|---|---|---|---|---|"
    while read -r label reference one many; do
      round=${label##*-}
      service=${RPS[postgres-$round]:-}
      spread=${RPS[postgres-merchants-$round]:-}
      echo "| $round | $reference | $one | $many | ${service:-} | $(ratio "${service:-0}" "$reference") |" \
           "${spread:-not run} | $([ -n "$spread" ] && ratio "$spread" "$reference") |"
    done <"$WORK/pgbench"
  fi
  if [ "${#LIFECYCLE[@]}" -gt 0 ]; then
    echo
    echo "## Captures and voids (postgres, one merchant)"
    echo
    echo "\`capture-void.lua\`: each authorization answered 201 is then captured in full or voided, alternately."
    echo
    echo "| round | requests/s | authorizations/s | captures/s | voids/s | p50 ms | p99 ms | non-201 |"
    echo "|---|---|---|---|---|---|---|---|"
    for row in "${LIFECYCLE[@]}"; do
      IFS='|' read -r round result <<<"$row"
      echo "| $round | $(field rps "$result") | $(field authorizations_ps "$result") | $(field captures_ps "$result") |" \
           "$(field voids_ps "$result") | $(field p50_ms "$result") | $(field p99_ms "$result") | $(field non_201 "$result") |"
    done
  fi
} >"$REPORT"
cat "$REPORT"
