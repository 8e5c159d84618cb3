# shellcheck shell=bash
# Shared by the load-test scenarios (load-tests/<scenario>/run.sh): tools, the jar, HAProxy in front of
# service instances on 127.0.0.1, the load generator, an event log, and the cleanup of everything started here.
# fault-soak, store-throughput, post-path, start-to-ready and image-start use only the generic ones (lt_log,
# lt_now_ms, lt_ensure_java, lt_ensure_jar, lt_jar, lt_test_tools_cp, lt_output, the smoke-mode settings).
#
# Instances live in "slots": slot N serves business traffic on $((LT_BASE_PORT + 100 + N)) and health on
# $((LT_BASE_PORT + 200 + N)). HAProxy knows every slot up front (server sN) and checks each one's
# /health/ready: a slot with nothing running is simply DOWN, a new instance joins when its readiness has passed
# `rise` checks, and an instance whose readiness turns 503 leaves after `fall` checks, the way an EndpointSlice
# follows a pod's Ready condition.

LT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"   # repository root
LT_DIR="$LT_ROOT/load-tests"
export LT_DIR
# Smoke mode (SMOKE=1): every scenario runs its whole code path (same instances, client, report generator) for a few
# seconds with a tiny load, so that a benchmark that no longer starts is caught by `./mvnw -B verify`
# (LoadTestSmokeIT). Its results and report go to target/load-tests-smoke/<scenario>/ (LT_OUT overrides), never to
# load-tests/results or load-tests/reports, and its numbers mean nothing. It only changes defaults: faster HAProxy
# checks, a 1 s pre-drain delay, a small heap, a 1 s warm-up at 20 rps, wrk paced to a few hundred requests a second,
# and LT_SMOKE_JVM_OPTS for every JVM a scenario starts (C1 only and the serial collector: half the CPU of a default
# start on 2 cores); any variable given still wins.
LT_SMOKE="${SMOKE:-0}"
[ "$LT_SMOKE" = 0 ] || [ "$LT_SMOKE" = 1 ] || { echo "SMOKE must be 0 or 1, not '$LT_SMOKE'" >&2; exit 2; }
LT_SMOKE_JVM_OPTS=""
# A smoke JVM also gets the jar's AOT cache (JDK 25) at LT_SMOKE_AOT_CACHE, when it is there by the time the scenario
# starts: LoadTestSmokeIT puts the ITs' child cache there before the first script, and start-to-ready's smoke training
# run leaves its own there. A start to ready then costs about half the CPU (measured 1.5 instead of 3 CPU-s). Not for
# start-to-ready's own starts, whose modes are with and without a cache (it sets LT_SMOKE_AOT=0). A cache that does
# not fit (another jar, another JDK) is ignored by the JVM, silently.
LT_SMOKE_AOT_CACHE="${LT_SMOKE_AOT_CACHE:-$LT_ROOT/target/load-tests-smoke/app.aot}"
if [ "$LT_SMOKE" = 1 ]; then
  LT_SMOKE_JVM_OPTS="-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
  if [ "${LT_SMOKE_AOT:-1}" = 1 ] && [ -s "$LT_SMOKE_AOT_CACHE" ] && [[ "$LT_SMOKE_AOT_CACHE" != *[[:space:]]* ]]; then
    LT_SMOKE_JVM_OPTS="$LT_SMOKE_JVM_OPTS -XX:AOTCache=$LT_SMOKE_AOT_CACHE -Xlog:aot*=off -Xlog:cds*=off"
  fi
  LT_CHECK_INTER_MS="${LT_CHECK_INTER_MS:-200}" LT_PRE_DRAIN="${LT_PRE_DRAIN:-PT1S}" LT_HEAP="${LT_HEAP:-256m}"
  LT_WARMUP_S="${LT_WARMUP_S:-1}" LT_WARMUP_RPS="${LT_WARMUP_RPS:-20}" LT_JAVA_OPTS="${LT_JAVA_OPTS:-$LT_SMOKE_JVM_OPTS}"
  # wrk paced (lib/wrk-common.lua): each connection waits 10 ms before each request.
  export LT_WRK_DELAY_MS="${LT_WRK_DELAY_MS:-10}"
fi
LT_BASE_PORT="${LT_BASE_PORT:-18000}"
LT_SLOTS="${LT_SLOTS:-4}"
LT_HAPROXY_PORT=$((LT_BASE_PORT + 80))
LT_STATS_PORT=$((LT_BASE_PORT + 79))
# HAProxy active checks: every LT_CHECK_INTER_MS, FALL failures take a server out, RISE successes put it in.
LT_CHECK_INTER_MS="${LT_CHECK_INTER_MS:-500}"
LT_CHECK_FALL="${LT_CHECK_FALL:-2}"
LT_CHECK_RISE="${LT_CHECK_RISE:-2}"
LT_CHECK_TIMEOUT_MS="${LT_CHECK_TIMEOUT_MS:-1000}"
# Service settings shared by every instance (the shutdown mode, graceful or naive, is per run: lt_start_instance).
LT_PRE_DRAIN="${LT_PRE_DRAIN:-PT3S}"
LT_DRAIN_TIMEOUT="${LT_DRAIN_TIMEOUT:-PT10S}"        # shutdown.drain-timeout
LT_CLEANUP_TIMEOUT="${LT_CLEANUP_TIMEOUT:-PT3S}"     # shutdown.cleanup-timeout
LT_METRICS_LINGER="${LT_METRICS_LINGER:-PT1S}"       # shutdown.metrics-linger (> 0: the last scrape sees the phases)
LT_HARD_DEADLINE="${LT_HARD_DEADLINE:-PT30S}"        # shutdown.hard-deadline
LT_LATENCY="${LT_LATENCY:-PT0.05S}"         # authorizer.simulated-latency: holds requests in flight
LT_JITTER="${LT_JITTER:-PT0.15S}"           # + uniform 0..jitter, so requests take 50-200 ms
LT_HEAP="${LT_HEAP:-768m}"
LT_JAVA_OPTS="${LT_JAVA_OPTS:-}"             # extra JVM options for every instance, e.g. -XX:TieredStopAtLevel=1
LT_BUDGET_S="${LT_BUDGET_S:-570}"           # a scenario skips the runs that would start after this many seconds
PY=/usr/bin/python3
[ -x "$PY" ] || PY="$(command -v python3 || true)"

declare -A LT_SLOT_PID=()     # slot -> pid of the instance running there
declare -A LT_SLOT_LOG=()     # slot -> its log file
declare -a LT_PIDS=()         # everything started here, for cleanup
declare -a LT_STOP_HOOKS=()   # functions run on exit before everything in LT_PIDS is killed (a store's orderly stop)
declare -a LT_FINAL_HOOKS=()  # functions run on exit after that (removing cgroups)
declare -a LT_INSTANCE_PREFIX=()  # command prefix of the next instance (set by a scenario's lt_before_instance)
LT_INSTANCE_NOTE=""           # and a word for its "start" event, e.g. its cgroup
LT_RESULTS=""

# lt_output SCENARIO: sets LT_RESULTS_DIR (raw results) and LT_REPORTS_DIR (reports) and creates them:
# load-tests/results and load-tests/reports, or in smoke mode target/load-tests-smoke/SCENARIO/{results,reports}.
lt_output() {
  if [ "$LT_SMOKE" = 1 ]; then
    local base="${LT_OUT:-$LT_ROOT/target/load-tests-smoke/$1}"
    LT_RESULTS_DIR="$base/results"
    LT_REPORTS_DIR="$base/reports"
  else
    LT_RESULTS_DIR="$LT_DIR/results"
    LT_REPORTS_DIR="$LT_DIR/reports"
  fi
  mkdir -p "$LT_RESULTS_DIR" "$LT_REPORTS_DIR"
}

lt_now_ms() { date +%s%3N; }
LT_STARTED_S=$(date +%s)

# lt_time_left: true while the scenario is inside its time budget (LT_BUDGET_S)
lt_time_left() { [ $(( $(date +%s) - LT_STARTED_S )) -lt "$LT_BUDGET_S" ]; }

lt_log() { printf '%s %s\n' "$(date +%H:%M:%S.%3N)" "$*" >&2; }

# Appends one line to the run's event log: epoch_ms,event,slot,detail
lt_event() {
  printf '%s,%s,%s,%s\n' "$(lt_now_ms)" "$1" "${2:-}" "${3:-}" >>"$LT_RUN_DIR/events.csv"
}

lt_cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  local pid hook
  for hook in "${LT_STOP_HOOKS[@]}"; do "$hook" || true; done
  for pid in "${LT_PIDS[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
  wait 2>/dev/null || true
  for hook in "${LT_FINAL_HOOKS[@]}"; do "$hook" || true; done
  if [ "$rc" -ne 0 ]; then
    lt_log "stopped (status $rc); results so far are in ${LT_RESULTS:-nowhere}"
  fi
  exit "$rc"
}

# lt_init NAME: results directory, traps, tools, jar. Everything started afterwards is killed on exit or Ctrl+C.
lt_init() {
  trap lt_cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  lt_output "$1"
  LT_RESULTS="$LT_RESULTS_DIR/$1-$(date +%Y%m%dT%H%M%S)"
  mkdir -p "$LT_RESULTS"
  lt_ensure_tools
  lt_ensure_jar
  lt_check_ports_free
  lt_environment >"$LT_RESULTS/environment.json"
}

lt_ensure_tools() {
  local missing=()
  command -v haproxy >/dev/null || missing+=(haproxy)
  command -v curl >/dev/null || missing+=(curl)
  [ -x /usr/bin/python3 ] || missing+=(python3)
  # A smoke run installs nothing (it runs inside `./mvnw verify`, as any user) and does without the plots.
  [ "$LT_SMOKE" = 1 ] || /usr/bin/python3 -c 'import matplotlib' 2>/dev/null || missing+=(python3-matplotlib)
  if [ ${#missing[@]} -gt 0 ] && [ "$LT_SMOKE" = 1 ]; then
    lt_log "missing: ${missing[*]} (Debian: apt-get install -y ${missing[*]})"
    exit 2
  fi
  if [ ${#missing[@]} -gt 0 ]; then
    lt_log "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
  PY=/usr/bin/python3
  lt_ensure_java
}

# lt_ensure_wrk: wrk on the PATH, installed with apt-get when run as root; else exits 2 saying how.
lt_ensure_wrk() {
  command -v wrk >/dev/null && return
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get install -y wrk >/dev/null || { apt-get update >/dev/null && apt-get install -y wrk >/dev/null; }
  else
    echo "missing: wrk (Debian/Ubuntu: sudo apt-get install -y wrk)" >&2; exit 2
  fi
}

# lt_ensure_java: JAVA_HOME set to a JDK >= 21 (the given one, else temurin-25, else any under /usr/lib/jvm).
lt_ensure_java() {
  if [ -z "${JAVA_HOME:-}" ] || [ ! -x "$JAVA_HOME/bin/java" ]; then
    local candidate
    for candidate in /usr/lib/jvm/temurin-25-jdk-amd64 /usr/lib/jvm/*; do
      if [ -x "$candidate/bin/javac" ] && "$candidate/bin/java" -version 2>&1 | grep -qE 'version "(2[1-9]|[3-9][0-9])'; then
        JAVA_HOME="$candidate"
        break
      fi
    done
  fi
  [ -n "${JAVA_HOME:-}" ] || { lt_log "no JDK >= 21 under /usr/lib/jvm"; exit 1; }
  export JAVA_HOME
}

# The packaged jar, by the name the pom gives it (target/jar.properties, written by the build).
lt_jar() {
  local name
  name="$(sed -n 's/^jar=//p' "$LT_ROOT/target/jar.properties" 2>/dev/null || true)"
  [ -n "$name" ] || { lt_log "no target/jar.properties: build first (./mvnw -B -DskipTests package)"; return 1; }
  printf '%s\n' "$LT_ROOT/target/$name"
}

# lt_test_tools_cp: the class path of the test code that runs beside the service (the issuer simulator, the naive
# shutdown contender): the service's jar (its manifest Class-Path brings target/libs) and the test-tools jar, which
# `./mvnw package` builds from target/test-classes (never in the service's jar).
lt_test_tools_cp() {
  local name
  name="$(sed -n 's/^test_tools=//p' "$LT_ROOT/target/jar.properties" 2>/dev/null || true)"
  [ -n "$name" ] || { lt_log "no test_tools in target/jar.properties: build (./mvnw -B -DskipTests package)"; return 1; }
  printf '%s:%s\n' "$(lt_jar)" "$LT_ROOT/target/$name"
}

lt_ensure_jar() {
  local jar tools
  jar="$(lt_jar 2>/dev/null || true)"
  tools="$(lt_test_tools_cp 2>/dev/null || true)"
  if [ -z "$jar" ] || [ ! -f "$jar" ] || [ ! -d "$LT_ROOT/target/libs" ] || [ -z "$tools" ] || [ ! -f "${tools#*:}" ]; then
    lt_log "building the jar"
    (cd "$LT_ROOT" && ./mvnw -B -q -DskipTests package)
  fi
}

lt_check_ports_free() {
  local port
  for port in "$LT_HAPROXY_PORT" "$LT_STATS_PORT" $(seq $((LT_BASE_PORT + 101)) $((LT_BASE_PORT + 100 + LT_SLOTS))) \
      $(seq $((LT_BASE_PORT + 201)) $((LT_BASE_PORT + 200 + LT_SLOTS))); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      lt_log "port $port is already in use on 127.0.0.1; set LT_BASE_PORT to another range"
      exit 1
    fi
  done
}

lt_environment() {
  local helidon
  helidon="$(grep -A2 '<artifactId>helidon-se</artifactId>' "$LT_ROOT/pom.xml" | sed -n 's/.*<version>\(.*\)<\/version>.*/\1/p' | head -1)"
  "$PY" - "$helidon" <<'EOF'
import json, os, platform, subprocess, sys, datetime
def out(*cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True).stdout.strip() or \
               subprocess.run(cmd, capture_output=True, text=True).stderr.strip()
    except OSError:
        return "?"
java = os.path.join(os.environ["JAVA_HOME"], "bin", "java")
model = [l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")]
print(json.dumps({
    "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    "cpus": os.cpu_count(), "cpu_model": model[0] if model else "?",
    "mem_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
    "kernel": platform.release(),
    "jdk": subprocess.run([java, "-version"], capture_output=True, text=True).stderr.splitlines()[0],
    "helidon": sys.argv[1], "haproxy": out("haproxy", "-v").splitlines()[0],
    "python": platform.python_version(),
    "loadavg_at_start": open("/proc/loadavg").read().split()[:3],
}, indent=1))
EOF
}

lt_slot_business_port() { echo $((LT_BASE_PORT + 100 + $1)); }
lt_slot_health_port() { echo $((LT_BASE_PORT + 200 + $1)); }

# lt_start_haproxy RUN_DIR: HAProxy in front of every slot, logging each request and each check state change.
lt_start_haproxy() {
  local cfg="$LT_RUN_DIR/haproxy.cfg" slot
  cat >"$cfg" <<EOF
global
    maxconn 8000
    # iso: every line starts with a microsecond timestamp, also the "Server ... is DOWN" state changes
    log stdout format iso local0 info

defaults
    mode http
    log global
    option httplog
    # The load generator keeps its connections to HAProxy open for the whole run; never close them under it.
    timeout connect 2s
    timeout client 60s
    timeout server 30s
    timeout http-keep-alive 60s
    # No retries and no redispatch: kube-proxy does not retry a request on another pod, and a retried POST
    # would hide exactly the failures this test is about. (The service is idempotent by key, but we measure
    # what the service does, not what a forgiving proxy makes of it.)
    retries 0
    retry-on none
    no option redispatch

frontend payments
    bind 127.0.0.1:$LT_HAPROXY_PORT
    maxconn 8000
    # Which instance answered (or <NOSRV>), also on HAProxy's own error responses.
    http-after-response set-header X-Backend %s
    default_backend instances

backend instances
    balance roundrobin
    option httpchk
    # HTTP/1.1 with a Host header: Helidon 4 answers an HTTP/1.0 request (HAProxy's default) with 505.
    http-check send meth GET uri /health/ready ver HTTP/1.1 hdr Host localhost
    http-check expect status 200
    # Emulates endpoint removal: a readiness 503 takes a server out after fall x inter, a new one joins after
    # rise x inter. The service's pre-drain delay must exceed fall x inter (plus one check's duration).
    default-server inter ${LT_CHECK_INTER_MS}ms fall $LT_CHECK_FALL rise $LT_CHECK_RISE
    # A check that gets no answer within LT_CHECK_TIMEOUT_MS counts as failed (kubelet's default timeoutSeconds is
    # 1). Without it HAProxy uses inter (500 ms), and on a CPU-starved machine healthy instances flap out.
    timeout check ${LT_CHECK_TIMEOUT_MS}ms
EOF
  for slot in $(seq 1 "$LT_SLOTS"); do
    echo "    server s$slot 127.0.0.1:$(lt_slot_business_port "$slot") check port $(lt_slot_health_port "$slot")" >>"$cfg"
  done
  cat >>"$cfg" <<EOF

frontend stats
    bind 127.0.0.1:$LT_STATS_PORT
    stats enable
    stats uri /stats
    no log
EOF
  haproxy -c -q -f "$cfg"
  LT_HAPROXY_LOG="$LT_RUN_DIR/haproxy.log"
  haproxy -db -f "$cfg" >"$LT_HAPROXY_LOG" 2>&1 &
  LT_PIDS+=($!)
  LT_HAPROXY_PID=$!
  local _
  for _ in $(seq 1 50); do
    curl -sf "http://127.0.0.1:$LT_STATS_PORT/stats;csv" >/dev/null && return 0
    sleep 0.1
  done
  lt_log "HAProxy did not start; see $LT_RUN_DIR/haproxy.log"
  exit 1
}

# lt_haproxy_state SLOT: UP, DOWN, "DOWN 1/2", ... as HAProxy sees server sSLOT
lt_haproxy_state() {
  curl -sf "http://127.0.0.1:$LT_STATS_PORT/stats;csv" | awk -F, -v s="s$1" '$1=="instances" && $2==s {print $18}'
}

lt_wait_haproxy() { # SLOT STATE TIMEOUT_S
  local deadline=$(( $(lt_now_ms) + $3 * 1000 ))
  while [ "$(lt_now_ms)" -lt "$deadline" ]; do
    [ "$(lt_haproxy_state "$1")" = "$2" ] && { lt_event "haproxy-$2" "$1"; return 0; }
    sleep 0.05
  done
  lt_log "slot $1 not $2 in HAProxy after $3 s"
  return 1
}

# lt_start_instance SLOT MODE [extra -D options]: starts the jar in SLOT in the background; MODE graceful runs it
# (java -jar, the shutdown sequence), naive runs the load tests' naive contender on it (NaiveShutdownMain from the
# test-tools jar: both listeners stop at the signal, 0.5 s of grace, like a plain Helidon app). A scenario that defines
# lt_before_instance SLOT has it called first (in this shell): it may set LT_INSTANCE_PREFIX (a command the java
# command line is appended to, which must exec it: the PID stays the instance's) and LT_INSTANCE_NOTE.
lt_start_instance() {
  local slot=$1 mode=$2
  shift 2
  local log launch
  case "$mode" in
    graceful) launch=(-jar "$(lt_jar)") ;;
    naive) launch=(-cp "$(lt_test_tools_cp)" com.example.payments.NaiveShutdownMain) ;;
    *) lt_log "unknown mode $mode (graceful, naive)"; return 1 ;;
  esac
  log="$LT_RUN_DIR/instance-s$slot-$(lt_now_ms).log"
  LT_INSTANCE_PREFIX=()
  LT_INSTANCE_NOTE=""
  if declare -F lt_before_instance >/dev/null; then lt_before_instance "$slot"; fi
  # shellcheck disable=SC2086
  "${LT_INSTANCE_PREFIX[@]}" "$JAVA_HOME/bin/java" -Xmx"$LT_HEAP" $LT_JAVA_OPTS \
    -Dserver.port="$(lt_slot_business_port "$slot")" -Dserver.host=127.0.0.1 \
    -Dhealth-server.port="$(lt_slot_health_port "$slot")" -Dhealth-server.host=127.0.0.1 \
    -Dshutdown.pre-drain-delay="$LT_PRE_DRAIN" -Dshutdown.drain-timeout="$LT_DRAIN_TIMEOUT" \
    -Dshutdown.cleanup-timeout="$LT_CLEANUP_TIMEOUT" -Dshutdown.metrics-linger="$LT_METRICS_LINGER" \
    -Dshutdown.hard-deadline="$LT_HARD_DEADLINE" ${LT_WARMUP_TIMEOUT:+-Dwarm-up.timeout="$LT_WARMUP_TIMEOUT"} \
    -Dauthorizer.simulated-latency="$LT_LATENCY" -Dauthorizer.simulated-latency-jitter="$LT_JITTER" \
    -Didempotency.max-keys=4000000 -Didempotency.retention=PT10M -Dauthorization.in-memory.max-resources=4000000 \
    -Dauth.api-keys='sha256:9702b04ac8da313c8ec0784e54e26e65016c0a9c0942463b0c6fb9f354071ab8 m_123' -Didempotency.merchant-quota.max-records=2000000 \
    -Didempotency.merchant-quota.max-in-flight=100000 \
    "$@" "${launch[@]}" >"$log" 2>&1 &
  local pid=$!
  LT_PIDS+=("$pid")
  LT_SLOT_PID[$slot]=$pid
  LT_SLOT_LOG[$slot]=$log
  lt_event start "$slot" "pid=$pid mode=$mode${LT_INSTANCE_NOTE:+ $LT_INSTANCE_NOTE}"
}

# lt_wait_ready SLOT TIMEOUT_S: until /health/ready answers 200 (what a Deployment waits for before going on).
lt_wait_ready() {
  local slot=$1 deadline=$(( $(lt_now_ms) + $2 * 1000 )) port
  port=$(lt_slot_health_port "$slot")
  while [ "$(lt_now_ms)" -lt "$deadline" ]; do
    if [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "http://127.0.0.1:$port/health/ready")" = 200 ]; then
      # SIGTERM is handled only once Main has logged this line; before it the JVM would die the default way.
      if grep -q 'serving business traffic' "${LT_SLOT_LOG[$slot]}"; then
        lt_event ready "$slot"
        return 0
      fi
    fi
    kill -0 "${LT_SLOT_PID[$slot]}" 2>/dev/null || { lt_log "instance in slot $slot died; see ${LT_SLOT_LOG[$slot]}"; return 1; }
    sleep 0.1
  done
  lt_log "slot $slot not ready after $2 s"
  return 1
}

# lt_sigterm SLOT: sends SIGTERM, waits for the exit, records it; sets LT_EXIT_STATUS.
lt_sigterm() {
  local slot=$1 pid=${LT_SLOT_PID[$1]}
  lt_event sigterm "$slot" "pid=$pid"
  kill -TERM "$pid"
  lt_wait_exit "$slot"
}

# lt_sigterm_watched SLOT OUT.json: SIGTERM sent by drainwatch.py, which times readiness, listener close, HAProxy
# removal and scrapes the final metrics; then waits for the exit like lt_sigterm.
lt_sigterm_watched() {
  local slot=$1 pid=${LT_SLOT_PID[$1]}
  lt_event sigterm "$slot" "pid=$pid"
  "$PY" "$LT_DIR/drain/drainwatch.py" --pid "$pid" --health-port "$(lt_slot_health_port "$slot")" \
    --business-port "$(lt_slot_business_port "$slot")" --stats-url "http://127.0.0.1:$LT_STATS_PORT/stats;csv" \
    --server "s$slot" >"$2"
  lt_wait_exit "$slot"
  # the exit status and the instance's whole log (copied next to the JSON), for the reports
  local log_copy
  log_copy="instance-s$slot-$(basename "${LT_SLOT_LOG[$slot]}" .log | sed 's/.*-//').log"
  [ -f "$(dirname "$2")/$log_copy" ] || cp "${LT_SLOT_LOG[$slot]}" "$(dirname "$2")/$log_copy"
  "$PY" - "$2" "$LT_EXIT_STATUS" "$log_copy" "s$slot" <<'PYEOF'
import json, sys
path, status, log, server = sys.argv[1:]
d = json.load(open(path))
d.update(exit_status=int(status), log=log, server=server)
json.dump(d, open(path, "w"))
PYEOF
}

lt_wait_exit() {
  local slot=$1 pid=${LT_SLOT_PID[$1]}
  LT_EXIT_STATUS=0
  wait "$pid" || LT_EXIT_STATUS=$?
  lt_event exit "$slot" "status=$LT_EXIT_STATUS"
  unset "LT_SLOT_PID[$slot]"
}

# lt_stop_all: SIGKILL whatever instances remain and HAProxy (between runs; results are already written).
lt_stop_all() {
  local slot
  for slot in "${!LT_SLOT_PID[@]}"; do
    kill -KILL "${LT_SLOT_PID[$slot]}" 2>/dev/null || true
    wait "${LT_SLOT_PID[$slot]}" 2>/dev/null || true
    unset "LT_SLOT_PID[$slot]"
  done
  if [ -n "${LT_HAPROXY_PID:-}" ]; then
    kill -TERM "$LT_HAPROXY_PID" 2>/dev/null || true
    wait "$LT_HAPROXY_PID" 2>/dev/null || true
    LT_HAPROXY_PID=""
  fi
  LT_HAPROXY_LOG=""
}

# lt_new_run NAME: a fresh directory for one run under the scenario's results.
lt_new_run() {
  LT_RUN_DIR="$LT_RESULTS/$1"
  mkdir -p "$LT_RUN_DIR"
  LT_HAPROXY_LOG_OFFSET=$(stat -c %s "${LT_HAPROXY_LOG:-/dev/null}" 2>/dev/null || echo 0)
  echo "epoch_ms,event,slot,detail" >"$LT_RUN_DIR/events.csv"
  lt_event loadavg "" "$(cut -d' ' -f1 /proc/loadavg)"
}

# lt_start_cluster MODE N: HAProxy plus N instances in slots 1..N, each ready (within LT_READY_TIMEOUT_S, 90 s) and UP
# in HAProxy.
lt_start_cluster() {
  local mode=$1 n=$2 slot
  lt_start_haproxy
  for slot in $(seq 1 "$n"); do lt_start_instance "$slot" "$mode"; done
  for slot in $(seq 1 "$n"); do lt_wait_ready "$slot" "${LT_READY_TIMEOUT_S:-90}"; done
  for slot in $(seq 1 "$n"); do lt_wait_haproxy "$slot" UP 60; done
  # Fresh JVMs interpret and compile their first few thousand requests; warm them up off the record, so that a
  # run measures the restart, not the JIT (replacements started during a run stay cold, as in a real deploy).
  lt_client_run "${LT_WARMUP_RPS:-100}" "${LT_WARMUP_S:-8}" "$LT_RUN_DIR/warmup.csv" "warmup-$(lt_now_ms)"
  lt_event warmed-up
}

# lt_scrape_invocations SLOT: authorizations decided by a running instance (authorizer_invocations_total with
# outcome approved or declined; "unknown" is a timed-out or failed issuer call, answered 502/504).
lt_scrape_invocations() {
  curl -sf --max-time 2 "http://127.0.0.1:$(lt_slot_health_port "$1")/metrics" \
    | awk '/^authorizer_invocations_total/ && !/outcome="unknown"/ {s += $NF} END {printf "%d\n", s}'
}

# lt_measure_peak N: the highest constant arrival rate that N graceful instances behind HAProxy sustain, found by
# climbing until the SERVICE fails (no step list, no ceiling but LT_PEAK_MAX_RPS): each step offers LT_PEAK_FACTOR x
# the previous one for LT_PEAK_STEP_S s (a fresh client run; its first LT_PEAK_SKIP_S s, the client's JIT warm-up,
# are not judged). A step
#   - fails (the service) on more than LT_PEAK_MAX_ERRORS (0) non-2xx or connection errors, latency p99 >
#     LT_PEAK_P99_MS, or 2xx throughput below LT_PEAK_MIN_THROUGHPUT_PCT % of the offered rate, while the client kept
#     its schedule;
#   - is invalid when the client fell behind its schedule (send lag p99 > LT_LAG_LIMIT_MS) and the service answered
#     everything: the client, not the service, was the limit there, so the step says nothing about the service.
# A failing or invalid step is tried once more (one step can catch another process's burst on a shared machine).
# The climb ends at the first step that fails twice (peak = the last passing rate, "service-limited") or is invalid
# twice ("client-limited": the peak is only a lower bound of the service's). After a service-limited end,
# LT_PEAK_REFINE (0) more steps halve the gap between the last passing and the first failing rate (to 10 rps).
# A scenario that defines lt_on_peak_step RATE ATTEMPT begin|end has it called around each step's load (e.g. to
# read its cgroups).
# Sets PEAK_RPS and PEAK_LIMITED_BY; writes $LT_RESULTS/peak.json (with first_failure: the verdict of the first
# step that failed twice, whose reasons say what gave way first).
LT_PEAK_START_RPS="${LT_PEAK_START_RPS:-200}"
LT_PEAK_FACTOR="${LT_PEAK_FACTOR:-1.4}"
LT_PEAK_MAX_RPS="${LT_PEAK_MAX_RPS:-50000}"
LT_PEAK_STEP_S="${LT_PEAK_STEP_S:-15}"
LT_PEAK_SKIP_S="${LT_PEAK_SKIP_S:-3}"
LT_PEAK_P99_MS="${LT_PEAK_P99_MS:-500}"
LT_PEAK_MAX_ERRORS="${LT_PEAK_MAX_ERRORS:-0}"
LT_PEAK_MIN_THROUGHPUT_PCT="${LT_PEAK_MIN_THROUGHPUT_PCT:-95}"
LT_PEAK_REFINE="${LT_PEAK_REFINE:-0}"
LT_LAG_LIMIT_MS="${LT_LAG_LIMIT_MS:-${LT_PEAK_LAG_MS:-100}}"

# lt_peak_step RATE: one step of lt_measure_peak (tried twice unless it passes); sets its outcome (pass | fail |
# invalid), appends to its steps, and sets its first_failure (the verdict of the first step that failed twice).
lt_peak_step() {
  local rate=$1 attempt verdict
  for attempt in 1 2; do
    if declare -F lt_on_peak_step >/dev/null; then lt_on_peak_step "$rate" "$attempt" begin; fi
    lt_client_run "$rate" "$LT_PEAK_STEP_S" "$LT_RUN_DIR/step-$rate-$attempt.csv" "peak$rate-$attempt"
    if declare -F lt_on_peak_step >/dev/null; then lt_on_peak_step "$rate" "$attempt" end; fi
    verdict="$("$PY" "$LT_DIR/lib/loadstats.py" judge "$LT_RUN_DIR/step-$rate-$attempt.csv" "$rate" \
      "$LT_PEAK_SKIP_S" "$LT_PEAK_P99_MS" "$LT_LAG_LIMIT_MS" "$LT_PEAK_MIN_THROUGHPUT_PCT" "$attempt" \
      "$LT_PEAK_MAX_ERRORS")"
    lt_log "peak step $rate rps, attempt $attempt: $verdict"
    steps="$steps${steps:+,}$verdict"
    outcome="$(sed -n 's/.*"outcome": "\([a-z]*\)".*/\1/p' <<<"$verdict")"
    [ "$outcome" = pass ] && break
  done
  [ "$outcome" != fail ] || [ -n "$first_failure" ] || first_failure=$verdict
}

lt_measure_peak() {
  lt_new_run peak
  lt_start_cluster graceful "$1"
  lt_log "peak search: from $LT_PEAK_START_RPS rps, x$LT_PEAK_FACTOR per step of $LT_PEAK_STEP_S s, until the service fails"
  local rate=$LT_PEAK_START_RPS steps="" last_ok=0 outcome="" limited_by="" first_failure="" failed_at=0 refine
  while [ "$rate" -le "$LT_PEAK_MAX_RPS" ]; do
    if ! lt_time_left; then limited_by="time budget"; break; fi
    lt_peak_step "$rate"
    case "$outcome" in
      pass) last_ok=$rate ;;
      fail) limited_by=service; failed_at=$rate; break ;;
      *) limited_by=client; break ;;
    esac
    rate=$("$PY" -c "import math,sys; print(max(int(sys.argv[1]) + 1, int(round(int(sys.argv[1]) * float(sys.argv[2]), -1))))" \
      "$rate" "$LT_PEAK_FACTOR")
  done
  refine=$LT_PEAK_REFINE
  while [ "$limited_by" = service ] && [ "$last_ok" -gt 0 ] && [ "$refine" -gt 0 ] && lt_time_left; do
    rate=$(( (last_ok + failed_at) / 20 * 10 ))
    [ "$rate" -gt "$last_ok" ] && [ "$rate" -lt "$failed_at" ] || break
    refine=$((refine - 1))
    lt_peak_step "$rate"
    case "$outcome" in
      pass) last_ok=$rate ;;
      fail) failed_at=$rate ;;
      *) break ;;
    esac
  done
  [ -n "$limited_by" ] || limited_by="LT_PEAK_MAX_RPS"
  lt_stop_all
  if [ "$last_ok" -eq 0 ]; then   # not even the first step passed: go on at that rate, and say so in the report
    lt_log "not even the first peak step passed (is the machine busy?): the runs use $LT_PEAK_START_RPS rps"
    last_ok=$LT_PEAK_START_RPS
    limited_by="nothing: no step passed ($limited_by)"
  fi
  PEAK_RPS=$last_ok
  PEAK_LIMITED_BY=$limited_by
  printf '{"peak_rps": %s, "limited_by": "%s", "instances": %s, "client": "%s", "start_rps": %s, "factor": %s, "step_seconds": %s, "skip_seconds": %s, "p99_limit_ms": %s, "max_errors": %s, "client_lag_limit_ms": %s, "min_throughput_pct": %s, "refine_steps": %s, "first_failure": %s, "steps": [%s]}\n' \
    "$PEAK_RPS" "$limited_by" "$1" "gatling" "$LT_PEAK_START_RPS" "$LT_PEAK_FACTOR" "$LT_PEAK_STEP_S" "$LT_PEAK_SKIP_S" \
    "$LT_PEAK_P99_MS" "$LT_PEAK_MAX_ERRORS" "$LT_LAG_LIMIT_MS" "$LT_PEAK_MIN_THROUGHPUT_PCT" "$LT_PEAK_REFINE" \
    "${first_failure:-null}" "$steps" >"$LT_RESULTS/peak.json"
  lt_log "peak: $PEAK_RPS rps (limited by: $limited_by)"
}

# lt_end_run: copies the part of HAProxy's log written since lt_new_run into the run's directory.
lt_end_run() {
  if [ -n "${LT_HAPROXY_LOG:-}" ] && [ -f "$LT_HAPROXY_LOG" ] && [ "$LT_HAPROXY_LOG" != "$LT_RUN_DIR/haproxy.log" ]; then
    tail -c +$((LT_HAPROXY_LOG_OFFSET + 1)) "$LT_HAPROXY_LOG" >"$LT_RUN_DIR/haproxy.log"
  fi
}

# ---- the open-model client: Gatling (load-tests/lib/gatling), for every scenario that needs one ----
# Gatling's Java DSL in a Maven project of its own, compiled once; each run is then one JVM on Gatling's own main
# class and the class path the build wrote (target/classpath.txt), without Maven. One CSV row per request
# (OpenModelSimulation's javadoc has the columns; loadstats.py reads them).
LT_GATLING_DIR="$LT_DIR/lib/gatling"
LT_CLIENT_PID=""
LT_CLIENT_OUT=""
# The client's JVM: its own heap (the Gatling Maven plugin's settings; in a smoke run a small one, C1 only and the
# serial collector), plus the opens its stats writer needs (lt_gatling_java_opts).
if [ "$LT_SMOKE" = 1 ]; then
  LT_GATLING_JVM_OPTS="${LT_GATLING_JVM_OPTS:--Xms64m -Xmx512m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC}"
else
  LT_GATLING_JVM_OPTS="${LT_GATLING_JVM_OPTS:--Xms512m -Xmx1g -XX:MaxInlineLevel=20 -XX:MaxTrivialSize=12}"
fi

# lt_gatling_java_opts: LT_GATLING_JVM_OPTS and what Gatling's Maven plugin adds on the JDK in JAVA_HOME (the
# sun.misc.Unsafe switch exists from JDK 23 on; JDK 21 and 22 refuse to start with it).
lt_gatling_java_opts() {
  local major
  major="$("$JAVA_HOME/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')"
  printf '%s --enable-native-access=ALL-UNNAMED --add-opens=java.base/java.lang=ALL-UNNAMED' "$LT_GATLING_JVM_OPTS"
  printf ' --add-opens=java.base/jdk.internal.misc=ALL-UNNAMED'
  [ "${major:-0}" -lt 23 ] || printf ' --sun-misc-unsafe-memory-access=allow'
}

# lt_gatling_build: compiles the simulation and writes Gatling's class path, unless both are newer than its sources;
# the first build resolves Gatling from Maven Central into ~/.m2 (later ones work offline). Scenarios running at the
# same time (LoadTestSmokeIT runs three) build it once: the second waits on the first's lock.
lt_gatling_build() {
  local built="$LT_GATLING_DIR/target/.built" cp="$LT_GATLING_DIR/target/classpath.txt"
  local log="$LT_RESULTS/gatling-build.log"
  mkdir -p "$LT_GATLING_DIR/target"
  (
    flock 9
    if [ -f "$built" ] && [ -s "$cp" ] && [ -z "$(find "$LT_GATLING_DIR/src" "$LT_GATLING_DIR/pom.xml" -newer "$built")" ] \
        && [ -f "$(tr ':' '\n' <"$cp" | head -1)" ]; then
      exit 0
    fi
    lt_log "building the Gatling client ($LT_GATLING_DIR)"
    rm -f "$built"
    # the repository's Maven wrapper (the version it pins; it finds .mvn/ in the repository root)
    cd "$LT_GATLING_DIR" && { "$LT_ROOT/mvnw" -B -q -o test-compile || "$LT_ROOT/mvnw" -B -q test-compile; } \
      >"$log" 2>&1 && touch "$built"
  ) 9>"$LT_GATLING_DIR/target/.build.lock" || { lt_log "Gatling build failed; see $log"; exit 1; }
  LT_GATLING_BUILT=1
}

# lt_client_start RATE DURATION_S OUT.csv [KEY_PREFIX [PORT]]: one Gatling run in the background (LT_CLIENT_PID),
# to PORT on 127.0.0.1 (default: HAProxy's); returns once the first request is on its way. lt_client_stop ends it
# early; lt_client_wait waits for its planned end. With LT_OFF_RECORD_S, the first that many seconds of the run get
# no row (part of DURATION_S), and it returns once the first request on the record is answered.
lt_client_start() {
  local rate=$1 duration=$2 out=$3 prefix=${4:-lt$(lt_now_ms)} port=${5:-$LT_HAPROXY_PORT}
  LT_CLIENT_OUT=$out
  [ -n "${LT_GATLING_BUILT:-}" ] || lt_gatling_build
  [ -n "${LT_GATLING_JAVA_OPTS:-}" ] || LT_GATLING_JAVA_OPTS="$(lt_gatling_java_opts)"
  rm -f "$out" "${out%.csv}.stop"
  # shellcheck disable=SC2086  # the JVM options are words
  "$JAVA_HOME/bin/java" $LT_GATLING_JAVA_OPTS \
    -cp "$LT_GATLING_DIR/target/test-classes:$(cat "$LT_GATLING_DIR/target/classpath.txt")" \
    -Dlt.port="$port" -Dlt.rate="$rate" -Dlt.duration="$duration" -Dlt.out="$out" -Dlt.keyPrefix="$prefix" \
    -Dlt.stopFile="${out%.csv}.stop" -Dlt.offRecordS="${LT_OFF_RECORD_S:-0}" io.gatling.app.Gatling --simulation payments.loadtest.OpenModelSimulation \
    --no-reports --results-folder "$(dirname "$out")/gatling" --run-description "$rate-rps" \
    >"${out%.csv}.gatling.log" 2>&1 </dev/null &
  LT_CLIENT_PID=$!
  LT_PIDS+=("$LT_CLIENT_PID")
  local _
  for _ in $(seq 1 $((600 + ${LT_OFF_RECORD_S:-0} * 10))); do   # until the first row on the record
    [ "$(stat -c %s "$out" 2>/dev/null || echo 0)" -gt 100 ] && { lt_event loadgen-start "" "rate=$rate"; return 0; }
    kill -0 "$LT_CLIENT_PID" 2>/dev/null || break
    sleep 0.1
  done
  lt_log "Gatling did not start sending; see ${out%.csv}.gatling.log"
  exit 1
}

# lt_client_wait: waits for the run started by lt_client_start to end (its duration is fixed up front, or
# lt_client_stop ended it), then anchors the CSV's schedule (loadstats.py rebase).
lt_client_wait() {
  wait "$LT_CLIENT_PID" || lt_log "Gatling exited with status $? (KO requests make it fail; the CSV has them)"
  "$PY" "$LT_DIR/lib/loadstats.py" rebase "$LT_CLIENT_OUT" >"${LT_CLIENT_OUT%.csv}.rebase.json"
  lt_event loadgen-stop
  lt_event loadavg "" "$(cut -d' ' -f1 /proc/loadavg)"
}

# lt_client_stop: no new request from now on; waits until every request sent has its answer (its CSV row).
lt_client_stop() {
  touch "${LT_CLIENT_OUT%.csv}.stop"
  lt_client_wait
}

# lt_client_run RATE DURATION_S OUT.csv [KEY_PREFIX]: one run in the foreground.
lt_client_run() {
  lt_client_start "$@"
  lt_client_wait
}
