#!/usr/bin/env bash
# Fault soak: two replicas on one shared idempotency store and one issuer simulator, a few thousand payments sent by
# clients that retry on a random replica, while a driver pauses, terminates and kills replicas and restarts the store.
# At the end every payment must have exactly one authorization (one id, one body, found by GET on every replica), and
# the issuer must have decided each payment once and approved none twice.
#
#   load-tests/fault-soak/run.sh [--store redis|postgres] [--duration 240] [--keys 4000] [--concurrency 32] [--seed N]
#                                [--lifecycle [--validity 45]]
#
# Writes load-tests/reports/fault-soak-<store>.md (and raw results under load-tests/results/fault-soak-*/) and exits
# 1 when an invariant breaks, 0 when every one holds, 2 on a usage or setup error.
#
# --lifecycle: each authorization is then captured or voided (client.py's plans: partial captures, captures racing
# each other and a void, capture-void-capture, void-capture, a capture after expiresAt, none), with
# authorization.validity set to --validity seconds (default 60; smoke 8); the report (fault-soak-lifecycle-<store>.md)
# adds the lifecycle invariants, from the answers, GET of every authorization, capture and void, the system of record's
# rows and the issuer simulator's ledger (GET /stats/ledger): no over-capture, no capture succeeded on a voided or
# expired authorization, no key with two ids, at most one issuer decision per capture or void key. Bounded: the fault window
# (--duration, default 240 s) plus start-up, the last keys' retries and the verification, about 5-6 minutes on 2 busy
# cores. Everything runs on 127.0.0.1 on free ports, with its own store and its own simulator (never the shared
# Redis on 6379); every process it starts is stopped by its PID when it ends, also on Ctrl+C.
#
# Faults, drawn in shuffled rounds so every kind comes up: pause a replica (SIGSTOP, SIGCONT 0.5 s to lease - 0.5 s
# later), pause it longer than the lease (lease + 0.5 s to 2 x lease), restart the store (Redis: SIGKILL, down 0-3 s,
# back empty: no persistence, every record lost; PostgreSQL: SIGKILL of the postmaster, down 0-3 s, back after crash
# recovery with every committed row), pause the store (PostgreSQL only: SIGSTOP of the postmaster and every backend,
# 0.5 s to 2 x lease), SIGTERM a replica (graceful drain) and SIGKILL one; a replica that exits is started again on
# the same ports with the same configuration. FAULT_GAP_MIN_MS / FAULT_GAP_MAX_MS (2000 / 6000) space them; the first
# comes FIRST_FAULT_S (8) into the run.
#
# A new store backend adds three functions, store_<name>_start, store_<name>_restart and store_<name>_stop, plus
# store_<name>_describe and store_<name>_dump_records (see the redis ones), and optionally store_<name>_pause (a
# fifth fault kind) and store_<name>_dump_rows (its system-of-record rows), and nothing else.
#
# ISSUER_DEDUP=0 runs the issuer simulator without attempt deduplication (issuer.deduplicate-attempts=false), an
# acquirer that decides every call afresh, and tells the service so (authorizer.acquirer-deduplicates=false: every
# attempt recorded before its call, one attempt id per execution, earlier attempts reversed first): the report then
# requires 0 payments holding two approvals net of reversals and 0 unknown outcomes left unresolved REVERSE_AFTER
# (PT5S in that mode) + 5 s after the verification.
# REVERSE_AFTER (environment) sets authorizer.unknown-outcome.reverse-after (default: the service's PT1M).
# FAULTS (environment) narrows the fault kinds, e.g. FAULTS="store-restart sigkill"; the report then requires those.
# SMOKE=1 (a few seconds; results and report under target/load-tests-smoke/fault-soak/): --duration 6 --keys 20
# --concurrency 4 --seed 1, FAULTS="store-restart sigkill" from 1 s on, 0.2-0.5 s apart, keys give up after 30 s.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=../lib/lib.sh
source "$HERE/../lib/lib.sh"

STORE=redis
DURATION=240
KEYS=4000
CONCURRENCY=32
SEED=""
MIN_DURATION=30
LIFECYCLE=0
VALIDITY_S=60
if [ "$LT_SMOKE" = 1 ]; then
  DURATION=6 KEYS=20 CONCURRENCY=4 SEED=1 MIN_DURATION=1 VALIDITY_S=8
  FAULTS=${FAULTS:-store-restart sigkill} FIRST_FAULT_S=${FIRST_FAULT_S:-1}
  FAULT_GAP_MIN_MS=${FAULT_GAP_MIN_MS:-200} FAULT_GAP_MAX_MS=${FAULT_GAP_MAX_MS:-500} KEY_DEADLINE_S=${KEY_DEADLINE_S:-30}
fi
while [ $# -gt 0 ]; do
  case "$1" in
    --store) STORE=$2; shift 2 ;;
    --duration) DURATION=$2; shift 2 ;;
    --keys) KEYS=$2; shift 2 ;;
    --concurrency) CONCURRENCY=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --lifecycle) LIFECYCLE=1; shift ;;
    --validity) VALIDITY_S=$2; shift 2 ;;
    -h|--help) sed -n '2,37p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done
case "$STORE" in
  redis|postgres) ;;
  in-memory) echo "--store in-memory: each replica would have its own store, so two replicas cannot share keys; the soak needs a shared store" >&2; exit 2 ;;
  *) echo "--store must be redis or postgres, not '$STORE'" >&2; exit 2 ;;
esac
[[ "$DURATION" =~ ^[0-9]+$ && "$DURATION" -ge "$MIN_DURATION" && "$DURATION" -le 1800 ]] \
  || { echo "--duration: $MIN_DURATION..1800 s" >&2; exit 2; }
[[ "$KEYS" =~ ^[0-9]+$ && "$KEYS" -ge 10 ]] || { echo "--keys: at least 10" >&2; exit 2; }
[[ "$CONCURRENCY" =~ ^[0-9]+$ && "$CONCURRENCY" -ge 1 && "$CONCURRENCY" -le 128 ]] || { echo "--concurrency: 1..128" >&2; exit 2; }
[[ "$VALIDITY_S" =~ ^[0-9]+$ && "$VALIDITY_S" -ge 1 && "$VALIDITY_S" -le 600 ]] || { echo "--validity: 1..600 s" >&2; exit 2; }
VARIANT=$STORE
CLIENT_LIFECYCLE=()
if [ "$LIFECYCLE" = 1 ]; then VARIANT="lifecycle-$STORE"; CLIENT_LIFECYCLE=(--lifecycle --validity "$VALIDITY_S"); fi
if [ -n "$SEED" ]; then RANDOM=$SEED; fi

# The service under test. Lease floor: in-flight-lease > authorizer.timeout 2 s + the store's worst case (Redis 1.5 s:
# lease 4 s, drain 5 s; PostgreSQL with its default database.* timeouts 2 x (0.5 + 1 + 0.25) = 3.5 s: lease 6 s,
# drain 7 s); the drain exceeds the same sum; hard deadline 20 s > pre-drain 1 + drain + cleanup 3 s.
REPLICAS=2
case "$STORE" in
  postgres) LEASE_S=6; DRAIN=PT7S ;;
  *) LEASE_S=4; DRAIN=PT5S ;;
esac
AUTHORIZER_TIMEOUT=PT2S
ISSUER_LATENCY="${ISSUER_LATENCY:-PT0.2S}"    # each issuer call takes 0.2 s + uniform 0..0.6 s: work for faults to hit
ISSUER_JITTER="${ISSUER_JITTER:-PT0.6S}"
ISSUER_DEDUP="${ISSUER_DEDUP:-1}"
ISSUER_DEDUPLICATES=true
if [ "$ISSUER_DEDUP" = 0 ]; then REVERSE_AFTER="${REVERSE_AFTER:-PT5S}"; ISSUER_DEDUPLICATES=false; fi
REVERSE_AFTER="${REVERSE_AFTER:-}"
HEAP="${HEAP:-384m}"
FIRST_FAULT_S="${FIRST_FAULT_S:-8}"
FAULT_GAP_MIN_MS="${FAULT_GAP_MIN_MS:-2000}"
FAULT_GAP_MAX_MS="${FAULT_GAP_MAX_MS:-6000}"
KEY_DEADLINE_S="${KEY_DEADLINE_S:-90}"
READY_TIMEOUT_S="${READY_TIMEOUT_S:-90}"      # a (re)started replica must be ready within it, else the run fails
DOUBLE_PCT="${DOUBLE_PCT:-20}"                # % of keys submitted twice at once, one on each replica
SHORT_TIMEOUT_PCT="${SHORT_TIMEOUT_PCT:-10}"  # % of requests whose client gives up after 0.1-0.8 s (else 3 s)
SERVICE_PROPS=(
  -Dserver.host=127.0.0.1 -Dhealth-server.host=127.0.0.1
  -Dauthorizer.type=http "-Dauthorizer.timeout=$AUTHORIZER_TIMEOUT" "-Didempotency.in-flight-lease=PT${LEASE_S}S"
  -Didempotency.fingerprint-secret=fault-soak-fingerprint-secret
  -Dshutdown.pre-drain-delay=PT1S "-Dshutdown.drain-timeout=$DRAIN" -Dshutdown.cleanup-timeout=PT3S
  -Dshutdown.metrics-linger=PT0S -Dshutdown.hard-deadline=PT20S
  ${REVERSE_AFTER:+"-Dauthorizer.unknown-outcome.reverse-after=$REVERSE_AFTER"}
  "-Dauthorizer.acquirer-deduplicates=$ISSUER_DEDUPLICATES"
  # The development key (client.py sends it, merchant m_123) and a merchant quota above the run's keys.
  "-Dauth.api-keys=sha256:9702b04ac8da313c8ec0784e54e26e65016c0a9c0942463b0c6fb9f354071ab8 m_123"
  -Didempotency.merchant-quota.max-records=1000000 -Didempotency.merchant-quota.max-in-flight=10000
)
# With --lifecycle the authorizations expire within the run (a late capture must be refused, the rest released).
if [ "$LIFECYCLE" = 1 ]; then SERVICE_PROPS+=("-Dauthorization.validity=PT${VALIDITY_S}S"); fi

lt_ensure_java
# shellcheck source=../lib/postgres.sh
source "$HERE/../lib/postgres.sh"
case "$STORE" in
  redis) STORE_TOOLS=(redis-server redis-cli); pg_lt_bin >/dev/null || exit 2 ;;
  postgres) STORE_TOOLS=(); pg_lt_bin >/dev/null || exit 2 ;;
esac
for tool in curl "${STORE_TOOLS[@]}"; do
  command -v "$tool" >/dev/null || { echo "missing: $tool (Debian: apt-get install -y curl redis-server postgresql)" >&2; exit 2; }
done
[ -x "$PY" ] || { echo "missing: python3 (Debian: apt-get install -y python3)" >&2; exit 2; }
"$PY" -c 'import aiohttp' 2>/dev/null \
  || { echo "missing: python3-aiohttp, the client's HTTP library (Debian: apt-get install -y python3-aiohttp)" >&2; exit 2; }
lt_ensure_jar
JAR="$(lt_jar)"
TOOLS_CP="$(lt_test_tools_cp)"   # the service's jar + the test-tools jar, which holds the issuer simulator

lt_output fault-soak
RUN="$LT_RESULTS_DIR/fault-soak-$VARIANT-$(date +%Y%m%dT%H%M%S)"
mkdir -p "$RUN/metrics"
EVENTS="$RUN/events.csv"
echo "epoch_ms,event,target,detail" >"$EVENTS"
event() { printf '%s,%s,%s,%s\n' "$(lt_now_ms)" "$1" "${2:-}" "${3:-}" >>"$EVENTS"; }

# ---- processes: every one is a child of this shell, tracked by PID, stopped by PID ---------------------------------

declare -A PID_OF=()      # name (replica-1, replica-2, store, issuer, client) -> pid
# Signals a tracked process only while it is still this shell's child: a PID that ended is never signalled, so a
# recycled PID (pid_max is small here) that now belongs to somebody else is safe.
signal_tracked() { # signal_tracked SIGNAL NAME
  local pid=${PID_OF[$2]:-}
  [ -n "$pid" ] || return 0
  [ "$(ps -o ppid= -p "$pid" 2>/dev/null | tr -d ' ')" = "$$" ] || return 0
  kill "-$1" "$pid" 2>/dev/null || true
}
cleanup() {
  local rc=$? name
  trap - EXIT INT TERM
  for name in "${!PID_OF[@]}"; do
    signal_tracked CONT "$name"
    signal_tracked KILL "$name"
  done
  wait 2>/dev/null || true
  [ "$rc" -eq 0 ] || lt_log "ended with status $rc; results in $RUN"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

declare -A TAKEN_PORT=()
# A port nobody listens on, below Linux's ephemeral range (32768+) so no outgoing connection takes it between a
# replica's exit and its restart on the same port.
free_port() {
  local port
  while :; do
    port=$((20000 + RANDOM % 12000))
    [ -z "${TAKEN_PORT[$port]:-}" ] || continue
    (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null && continue
    TAKEN_PORT[$port]=1
    echo "$port"
    return
  done
}

wait_exit() { # wait_exit NAME: reaps it; sets EXIT_STATUS
  local pid=${PID_OF[$1]}
  EXIT_STATUS=0
  wait "$pid" 2>/dev/null || EXIT_STATUS=$?
  unset "PID_OF[$1]"
}

rand_between() { echo $(( $1 + (RANDOM * 32768 + RANDOM) % ($2 - $1 + 1) )); }
sleep_ms() { sleep "$(printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)))"; }

# ---- store backends -------------------------------------------------------------------------------------------------
# store_<name>_start: starts the store (once), sets STORE_PROPS (the service's -D options for it).
# store_<name>_restart: the "store restart" fault, run in this shell (it tracks the new PID); sets STORE_RESTARTED to
# what it did (no commas). store_<name>_stop: stops it.
# store_<name>_describe: one line for the report. store_<name>_dump_records FILE: every authorization record the
# store holds, one JSON body per line (the report counts records per reference).

REDIS_PORT=""
RESOURCES_PORT=""   # the PostgreSQL that holds the authorizations (the store itself with postgres)
store_redis_run() {
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no --dir "$RUN" \
    --maxmemory-policy noeviction >>"$RUN/redis.log" 2>&1 &
  PID_OF[store]=$!
  event store-start redis "pid=${PID_OF[store]} port=$REDIS_PORT"
  local _
  for _ in $(seq 100); do
    [ "$(redis-cli -p "$REDIS_PORT" ping 2>/dev/null)" = PONG ] && return 0
    sleep 0.05
  done
  lt_log "redis-server did not start; see $RUN/redis.log"
  exit 1
}
store_redis_start() {
  REDIS_PORT=$(free_port)
  store_redis_run
  # The authorizations themselves (the resources GET reads, on any replica) live in PostgreSQL behind the Redis
  # registry, as staging and prod run: a PostgreSQL of its own, not restarted by the faults (they hit Redis).
  RESOURCES_PORT=$(free_port)
  pg_lt_init "$RUN/resources-pgdata" || exit 2
  pg_lt_run "$RUN/resources-pgdata" "$RESOURCES_PORT" "$RUN/resources-postgres.log" -c max_connections=50 \
    || { lt_log "postgres (resources) did not start; see $RUN/resources-postgres.log"; exit 1; }
  PID_OF[resources]=$PG_LT_PID
  event store-start resources "pid=${PID_OF[resources]} port=$RESOURCES_PORT"
  pg_lt_prepare "$RESOURCES_PORT"
  local words word
  read -r -a words <<<"$(pg_lt_url "$RESOURCES_PORT")"
  STORE_PROPS=(-Didempotency.store=redis -Didempotency.redis.uri="redis://127.0.0.1:$REDIS_PORT")
  for word in "${words[@]}"; do
    [[ "$word" == -Ddatabase.* ]] && STORE_PROPS+=("$word")
  done
}
store_redis_restart() {
  local down_ms
  down_ms=$(rand_between 0 3000)
  signal_tracked KILL store
  wait_exit store
  sleep_ms "$down_ms"
  store_redis_run
  STORE_RESTARTED="SIGKILL; down ${down_ms} ms; back empty"
}
store_redis_stop() { signal_tracked TERM store; wait_exit store; }
store_redis_describe() { echo "$(redis-server --version | cut -d' ' -f1-3), no persistence (--save '' --appendonly no)"; }
store_redis_dump_records() {
  redis-cli -p "$REDIS_PORT" --scan --pattern 'payments-authorization:authorization:*' \
    | sed 's/^/GET /' | redis-cli -p "$REDIS_PORT" >"$1"
}

PG_PORT=""
store_postgres_run() { # (again) on the same data directory and port; retries while the killed server's backends exit
  local attempt
  for attempt in $(seq 50); do
    if pg_lt_run "$RUN/pgdata" "$PG_PORT" "$RUN/postgres.log" -c max_connections=50 2>>"$RUN/postgres-starts.log"; then
      PID_OF[store]=$PG_LT_PID
      event store-start postgres "pid=${PID_OF[store]} port=$PG_PORT attempt=$attempt"
      return 0
    fi
    wait "$PG_LT_PID" 2>/dev/null || true
    sleep 0.2
  done
  lt_log "postgres did not start; see $RUN/postgres.log"
  exit 1
}
store_postgres_start() {
  PG_PORT=$(free_port)
  pg_lt_init "$RUN/pgdata" || exit 2
  store_postgres_run
  RESOURCES_PORT=$PG_PORT
  pg_lt_prepare "$PG_PORT"
  read -r -a STORE_PROPS <<<"$(pg_lt_url "$PG_PORT")"
}
store_postgres_restart() { # a crash: the postmaster killed, its backends exit on their own, crash recovery at start
  local down_ms
  down_ms=$(rand_between 0 3000)
  signal_tracked KILL store
  wait_exit store
  sleep_ms "$down_ms"
  store_postgres_run
  STORE_RESTARTED="SIGKILL of the postmaster; down ${down_ms} ms; back after crash recovery"
}
store_postgres_backends() { ps -o pid= --ppid "${PID_OF[store]}" 2>/dev/null | tr -d ' '; }
store_postgres_pause() { # the whole server frozen: the postmaster and every backend; sets STORE_PAUSED
  local ms pid backends
  ms=$(rand_between 500 $((LEASE_S * 2000)))
  backends=$(store_postgres_backends)
  signal_tracked STOP store
  for pid in $backends; do kill -STOP "$pid" 2>/dev/null || true; done
  sleep_ms "$ms"
  for pid in $backends; do kill -CONT "$pid" 2>/dev/null || true; done
  signal_tracked CONT store
  STORE_PAUSED="SIGSTOP of the postmaster and its $(echo "$backends" | wc -w) processes for $ms ms"
}
store_postgres_stop() { signal_tracked TERM store; wait_exit store; rm -rf "$RUN/pgdata"; }
store_postgres_describe() { echo "$("$(pg_lt_bin)/postgres" --version), fsync and synchronous_commit on (defaults)"; }
store_postgres_dump_records() { # every recorded authorization decision: the exact 201 body, one per line
  pg_lt_psql "$PG_PORT" -d payments -At \
    -c "SELECT convert_from(body, 'UTF8') FROM decisions WHERE kind = 'authorization'" >"$1"
}
store_postgres_dump_rows() { # the system of record: one JSON object per authorization row
  pg_lt_psql "$PG_PORT" -d payments -At -c "SELECT json_build_object('id', id, 'attempt_id', attempt_id, \
    'reference', reference, 'status', status, 'decline_code', decline_code, 'amount', amount) FROM authorizations" >"$1"
}

# The lifecycle as the system of record holds it (PostgreSQL on both store variants: with redis, the resources'
# database): every authorization row and every capture, void and expiry, one JSON object per line.
dump_lifecycle() {
  pg_lt_psql "$RESOURCES_PORT" -d payments -At -c "SELECT json_build_object('id', id, 'attempt_id', attempt_id, \
    'reference', reference, 'status', status, 'state', state, 'amount', amount, 'captured_amount', captured_amount, \
    'reserved_amount', reserved_amount, 'void_pending', void_pending, 'captures', captures, \
    'expires_at_ms', floor(extract(epoch FROM expires_at) * 1000)) FROM authorizations" >"$RUN/lifecycle-authorizations.jsonl"
  pg_lt_psql "$RESOURCES_PORT" -d payments -At -c "SELECT json_build_object('id', id, 'kind', kind, \
    'authorization_id', authorization_id, 'attempt_id', attempt_id, 'amount', amount, 'status', status, \
    'decline_code', decline_code, 'created_at_ms', floor(extract(epoch FROM created_at) * 1000), \
    'settled_at_ms', floor(extract(epoch FROM settled_at) * 1000)) FROM authorization_operations" \
    >"$RUN/lifecycle-operations.jsonl"
}

# ---- issuer simulator and replicas ----------------------------------------------------------------------------------

start_issuer() {
  # shellcheck disable=SC2086  # LT_SMOKE_JVM_OPTS: words on purpose
  "$JAVA_HOME/bin/java" $LT_SMOKE_JVM_OPTS -Xmx256m -Dissuer.port=0 -Dissuer.simulated-latency="$ISSUER_LATENCY" \
    -Dissuer.simulated-latency-jitter="$ISSUER_JITTER" -Dissuer.deduplicate-attempts="$ISSUER_DEDUPLICATES" \
    -cp "$TOOLS_CP" com.example.payments.issuer.IssuerSimulator \
    >"$RUN/issuer.log" 2>&1 &
  PID_OF[issuer]=$!
  local _
  for _ in $(seq 300); do
    ISSUER_PORT=$(grep -o 'Issuer simulator listening on port [0-9]*' "$RUN/issuer.log" | grep -o '[0-9]*$' || true)
    [ -n "$ISSUER_PORT" ] && { event issuer-start issuer "pid=${PID_OF[issuer]} port=$ISSUER_PORT"; return 0; }
    sleep 0.1
  done
  lt_log "issuer simulator did not start; see $RUN/issuer.log"
  exit 1
}

declare -A BUSINESS_PORT=() HEALTH_PORT=() REPLICA_LOG=() STARTS=()
start_replica() { # start_replica N: on its own ports, the same configuration every time
  local n=$1
  STARTS[$n]=$(( ${STARTS[$n]:-0} + 1 ))
  REPLICA_LOG[$n]="$RUN/replica-$n-start-${STARTS[$n]}.log"
  # shellcheck disable=SC2086  # LT_SMOKE_JVM_OPTS: words on purpose
  "$JAVA_HOME/bin/java" $LT_SMOKE_JVM_OPTS -Xmx"$HEAP" -Dserver.port="${BUSINESS_PORT[$n]}" -Dhealth-server.port="${HEALTH_PORT[$n]}" \
    "${SERVICE_PROPS[@]}" -Dauthorizer.http.uri="http://127.0.0.1:$ISSUER_PORT" "${STORE_PROPS[@]}" \
    -jar "$JAR" >"${REPLICA_LOG[$n]}" 2>&1 &
  PID_OF[replica-$n]=$!
  event replica-start "replica-$n" "pid=${PID_OF[replica-$n]}"
}
wait_replica_ready() { # wait_replica_ready N: readiness 200 and the signal handlers installed
  local n=$1 deadline=$(( $(lt_now_ms) + READY_TIMEOUT_S * 1000 ))
  while [ "$(lt_now_ms)" -lt "$deadline" ]; do
    if grep -q 'serving business traffic' "${REPLICA_LOG[$n]}" && [ "$(curl -s -o /dev/null -w '%{http_code}' \
        --max-time 1 "http://127.0.0.1:${HEALTH_PORT[$n]}/health/ready")" = 200 ]; then
      event replica-ready "replica-$n"
      return 0
    fi
    if [ -z "${PID_OF[replica-$n]:-}" ] || ! kill -0 "${PID_OF[replica-$n]}" 2>/dev/null; then
      lt_log "replica $n died while starting; see ${REPLICA_LOG[$n]}"
      exit 1
    fi
    sleep 0.2
  done
  lt_log "replica $n not ready after $READY_TIMEOUT_S s (READY_TIMEOUT_S); see ${REPLICA_LOG[$n]}"
  exit 1
}
scrape_replica() { # scrape_replica N: its counters so far (they die with it)
  curl -s --max-time 2 "http://127.0.0.1:${HEALTH_PORT[$1]}/metrics" \
    >"$RUN/metrics/replica-$1-start-${STARTS[$1]}-$(lt_now_ms).txt" || true
}

# ---- faults ---------------------------------------------------------------------------------------------------------

fault() { # fault KIND
  local kind=$1 n ms pid
  n=$(rand_between 1 "$REPLICAS")
  case "$kind" in
    pause|pause-past-lease)
      if [ "$kind" = pause ]; then ms=$(rand_between 500 $((LEASE_S * 1000 - 500))); else
        ms=$(rand_between $((LEASE_S * 1000 + 500)) $((LEASE_S * 2000))); fi
      event fault "replica-$n" "$kind ${ms} ms"
      signal_tracked STOP "replica-$n"
      sleep_ms "$ms"
      signal_tracked CONT "replica-$n"
      event fault-end "replica-$n" "$kind"
      lt_log "fault: replica $n paused for $ms ms"
      ;;
    store-restart)
      event fault store "$kind"
      "store_${STORE}_restart"
      event fault-end store "$kind: $STORE_RESTARTED"
      lt_log "fault: $STORE restarted ($STORE_RESTARTED)"
      ;;
    store-pause)
      event fault store "$kind"
      "store_${STORE}_pause"
      event fault-end store "$kind: $STORE_PAUSED"
      lt_log "fault: $STORE paused ($STORE_PAUSED)"
      ;;
    sigterm|sigkill)
      scrape_replica "$n"
      pid=${PID_OF[replica-$n]}
      event fault "replica-$n" "$kind pid=$pid"
      if [ "$kind" = sigterm ]; then signal_tracked TERM "replica-$n"; else signal_tracked KILL "replica-$n"; fi
      wait_exit "replica-$n"
      event replica-exit "replica-$n" "$kind status=$EXIT_STATUS"
      start_replica "$n"
      wait_replica_ready "$n"
      event fault-end "replica-$n" "$kind"
      lt_log "fault: replica $n $kind, exit status $EXIT_STATUS, restarted and ready"
      ;;
  esac
}

# The first round always runs to its end, so every kind comes up at least once even when a slow machine makes a fault
# outlast a short window (the report requires every kind).
drive_faults() { # until DURATION seconds after the clients started, in shuffled rounds of every kind
  local end=$(( $(lt_now_ms) + DURATION * 1000 )) kinds i j tmp round=0
  sleep "$FIRST_FAULT_S"
  while [ "$(lt_now_ms)" -lt "$end" ]; do
    round=$((round + 1))
    kinds=("${FAULT_KINDS[@]}")
    for ((i = ${#kinds[@]} - 1; i > 0; i--)); do
      j=$((RANDOM % (i + 1))); tmp=${kinds[i]}; kinds[i]=${kinds[j]}; kinds[j]=$tmp
    done
    for kind in "${kinds[@]}"; do
      [ "$(lt_now_ms)" -lt "$end" ] || [ "$round" = 1 ] || break
      event loadavg "" "$(cut -d' ' -f1 /proc/loadavg)"
      fault "$kind"
      sleep_ms "$(rand_between "$FAULT_GAP_MIN_MS" "$FAULT_GAP_MAX_MS")"
    done
  done
}

FAULT_KINDS=(pause pause-past-lease store-restart sigterm sigkill)
if declare -F "store_${STORE}_pause" >/dev/null; then FAULT_KINDS+=(store-pause); fi
if [ -n "${FAULTS:-}" ]; then
  for kind in $FAULTS; do
    [[ " ${FAULT_KINDS[*]} " == *" $kind "* ]] || { echo "FAULTS: '$kind' is not one of: ${FAULT_KINDS[*]}" >&2; exit 2; }
  done
  read -r -a FAULT_KINDS <<<"$FAULTS"
fi

# ---- the run --------------------------------------------------------------------------------------------------------

lt_log "results in $RUN"
cat >"$RUN/params.json" <<EOF
{"store": "$STORE", "lifecycle": $LIFECYCLE, "validity_s": $VALIDITY_S, "duration_s": $DURATION, "keys": $KEYS, "concurrency": $CONCURRENCY, "seed": "${SEED}",
 "replicas": $REPLICAS, "lease_s": $LEASE_S, "authorizer_timeout": "$AUTHORIZER_TIMEOUT",
 "issuer_latency": "$ISSUER_LATENCY", "issuer_jitter": "$ISSUER_JITTER", "heap": "$HEAP",
 "issuer_dedup": $ISSUER_DEDUP, "reverse_after": "${REVERSE_AFTER:-PT1M}",
 "first_fault_s": $FIRST_FAULT_S, "fault_gap_ms": [$FAULT_GAP_MIN_MS, $FAULT_GAP_MAX_MS],
 "key_deadline_s": $KEY_DEADLINE_S, "fault_kinds": [$(printf '"%s",' "${FAULT_KINDS[@]}" | sed 's/,$//')], "double_pct": $DOUBLE_PCT, "short_timeout_pct": $SHORT_TIMEOUT_PCT, "service_props": "$(printf '%s ' "${SERVICE_PROPS[@]}")",
 "store_description": "$("store_${STORE}_describe")", "jdk": "$("$JAVA_HOME/bin/java" -version 2>&1 | head -1 | tr -d '"')",
 "cpus": $(nproc), "cpu_model": "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')",
 "loadavg_start": "$(cut -d' ' -f1-3 /proc/loadavg)", "started": "$(date -u +%Y-%m-%dT%H:%M:%SZ)"}
EOF

"store_${STORE}_start"
start_issuer
for n in $(seq 1 "$REPLICAS"); do
  BUSINESS_PORT[$n]=$(free_port)
  HEALTH_PORT[$n]=$(free_port)
  start_replica "$n"
done
for n in $(seq 1 "$REPLICAS"); do wait_replica_ready "$n"; done

REPLICA_ARGS=()
for n in $(seq 1 "$REPLICAS"); do REPLICA_ARGS+=(--replica "127.0.0.1:${BUSINESS_PORT[$n]}"); done
"$PY" "$HERE/client.py" soak "${REPLICA_ARGS[@]}" --out "$RUN" --keys "$KEYS" --duration "$DURATION" \
  --concurrency "$CONCURRENCY" --key-deadline "$KEY_DEADLINE_S" --double-pct "$DOUBLE_PCT" \
  --short-timeout-pct "$SHORT_TIMEOUT_PCT" ${SEED:+--seed "$SEED"} "${CLIENT_LIFECYCLE[@]}" \
  >"$RUN/client-soak.json" 2>"$RUN/client-soak.stderr" &
PID_OF[client]=$!
event clients-start "" "keys=$KEYS"
lt_log "clients started: $KEYS keys over $DURATION s; faults from ${FIRST_FAULT_S} s on"

drive_faults
event faults-stop
lt_log "fault window over; waiting for the last keys (at most $KEY_DEADLINE_S s)"
wait_exit client
event clients-end "" "status=$EXIT_STATUS"
[ "$EXIT_STATUS" = 0 ] || { lt_log "client failed: $(cat "$RUN/client-soak.stderr")"; exit 1; }
curl -sf --max-time 5 "http://127.0.0.1:$ISSUER_PORT/stats" >"$RUN/issuer-stats-soak.json" || true

lt_log "verifying: a replay of every key, then GET of its id on every replica"
"$PY" "$HERE/client.py" verify "${REPLICA_ARGS[@]}" --out "$RUN" --concurrency 16 --short-timeout-pct 0 \
  --key-deadline 30 "${CLIENT_LIFECYCLE[@]}" >"$RUN/client-verify.json" 2>"$RUN/client-verify.stderr" \
  || { lt_log "verification failed: $(cat "$RUN/client-verify.stderr")"; exit 1; }
event verified
if [ "$ISSUER_DEDUP" = 0 ]; then
  # The reconciler's deadline plus a few of its runs: every unknown outcome must be resolved by then.
  lt_log "waiting $REVERSE_AFTER + 5 s for the reconciler"
  sleep $(( $(echo "$REVERSE_AFTER" | tr -dc '0-9') + 5 ))
  if [ -n "$RESOURCES_PORT" ]; then
    pg_lt_psql "$RESOURCES_PORT" -d payments -At -c "SELECT count(*) FROM unknown_outcomes" >"$RUN/unknown-outcomes-left.txt"
  fi
fi
curl -sf --max-time 5 "http://127.0.0.1:$ISSUER_PORT/stats" >"$RUN/issuer-stats.json"
"store_${STORE}_dump_records" "$RUN/store-records.txt"
if declare -F "store_${STORE}_dump_rows" >/dev/null; then "store_${STORE}_dump_rows" "$RUN/store-rows.jsonl"; fi
for n in $(seq 1 "$REPLICAS"); do scrape_replica "$n"; done

# Final graceful stops, so that every replica's last shutdown is in the results too.
for n in $(seq 1 "$REPLICAS"); do
  signal_tracked TERM "replica-$n"
  wait_exit "replica-$n"
  event replica-exit "replica-$n" "final status=$EXIT_STATUS"
done
# The issuer's ledger and the system of record once no replica runs: the expiry worker would otherwise settle an
# expiry between the two snapshots (seen: a SUCCEEDED expiry whose void the ledger, read a moment before, lacked).
if [ "$LIFECYCLE" = 1 ]; then
  curl -sf --max-time 10 "http://127.0.0.1:$ISSUER_PORT/stats/ledger" >"$RUN/issuer-ledger.json"
  dump_lifecycle
fi
signal_tracked TERM issuer
wait_exit issuer
"store_${STORE}_stop"
echo "{\"loadavg_end\": \"$(cut -d' ' -f1-3 /proc/loadavg)\", \"ended\": \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\"}" >"$RUN/end.json"

if [ "$ISSUER_DEDUP" = 0 ]; then VARIANT="$VARIANT-no-dedup"; fi
REPORT="$LT_REPORTS_DIR/fault-soak-$VARIANT.md"
if "$PY" "$HERE/report.py" "$RUN" "$REPORT"; then
  lt_log "every invariant holds; report: $REPORT"
else
  rc=$?
  lt_log "INVARIANT BROKEN (or report failed, status $rc); report: $REPORT, results: $RUN"
  exit 1
fi
