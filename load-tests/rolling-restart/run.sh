#!/usr/bin/env bash
# Rolling restart under load, graceful vs naive shutdown, through HAProxy on 127.0.0.1: by default the staging setup
# (2 replicas on a shared PostgreSQL, the staging shutdown budgets), each instance CPU-limited like a pod.
#
#   load-tests/rolling-restart/run.sh
#   STORE=redis load-tests/rolling-restart/run.sh
#
# 0. The store (STORE): a private PostgreSQL (../lib/postgres.sh) on LT_BASE_PORT + 90, or Redis on + 91 as the
#    idempotency registry with that PostgreSQL behind it as the system of record, or the in-memory stores. PostgreSQL
#    and Redis run together in one cgroup limited to STORE_CPU cores; each instance in a cgroup of its own limited to
#    INSTANCE_CPU (../lib/cgroup.sh: cgroup v1 cpu.cfs_quota_us / cfs_period_us, or v2 cpu.max; period 100 ms like the
#    kubelet's), a replacement in a new one like a new pod; the client and HAProxy run outside any limit. Every
#    cgroup's cpu.stat is read before and after each run (and each peak step), and removed on exit.
# 1. Measures the peak (lt_measure_peak in ../lib/lib.sh: climbs until the service fails; here by default: 0 errors
#    and p99 <= 500 ms over 60 s judged, then LT_PEAK_REFINE halvings of the gap), unless PEAK_RPS is given.
# 2. For each variant in MODES: HAProxy and INSTANCES fresh instances, warmed up off the record; then for each
#    load level in LEVELS (% of the peak): one constant-rate open-model load through HAProxy (Gatling, ../lib/gatling) long
#    enough for MIN_REQUESTS requests (and at least WARMUP_S + MIN_ROLLS x (ROLL_S + ROLL_GAP_S)). Inside it, after WARMUP_S of steady state,
#    rolling restarts (maxSurge 1 / maxUnavailable 0: for each running instance, start its replacement, wait until
#    /health/ready answers 200 and then MIN_READY_S more, as the Deployment controller waits minReadySeconds before
#    it counts a new pod available, then SIGTERM the old one, timed by ../drain/drainwatch.py, and wait for its exit),
#    ROLL_GAP_S of steady state between them, up to MAX_ROLLS while one fits before the load's planned end. Every
#    request's outcome goes to results/<run>/requests.csv.
# 3. Writes load-tests/reports/rolling-restart.md (+ .png) from the results.
#
# Variants: graceful (the service as configured: its shutdown sequence, and every replacement runs its warm-up before
# ready), graceful-nowarmup (every instance without the warm-up, warm-up.requests=0, to show what it is worth),
# naive (the naive contender, NaiveShutdownMain from the test-tools jar: both listeners stop at the signal).
# Settings (environment): MODES="graceful naive" LEVELS="100" INSTANCES=2 PEAK_RPS= MIN_REQUESTS=100000 WARMUP_S=10 (60 with an INSTANCE_CPU limit)
# LEVEL_WARMUP_S (30 with an INSTANCE_CPU limit, else 0: the level's rate, off the record, at the head of its load)
# MIN_READY_S (the manifest's minReadySeconds, k8s/base/deployment.yaml; 0 in a smoke run)
# ROLL_S=50 (100 with an INSTANCE_CPU limit; plus INSTANCES x MIN_READY_S) ROLL_GAP_S=20 MIN_ROLLS=2 MAX_ROLLS=4
# READY_TIMEOUT_S=180
# PEAK_FROM=<earlier results dir>, and the LT_* variables of ../lib/lib.sh (ports, HAProxy
# checks, shutdown timings, simulated latency, peak search, client lag limit LT_LAG_LIMIT_MS, time budget LT_BUDGET_S).
#   STORE=postgres | redis | memory (postgres)
#   INSTANCE_CPU=0.5   cores per instance (CFS quota); 0: no cgroup
#   STORE_CPU=1        cores for PostgreSQL and Redis together; 0: no cgroup
#   SURGE_RESERVE=1    with an INSTANCE_CPU limit: a stand-in spends INSTANCE_CPU in a cgroup of its own whenever no
#                      replacement runs (the peak search included), so the peak leaves the CPU a replacement takes on
#                      this one machine, as a node gives a surge pod CPU of its own (setup.sh); 0: the peak takes it
#   (Tried first: with 0.3 and 0.4 no peak step passed at 100 rps; with 0.5 and 0.4 a PostgreSQL throttled in
#   bursts held row locks past lock-timeout and connections past connection-timeout at 80 rps, so the peak (70 rps)
#   was the database's quota, and 100,000 requests at 70 rps take 24 minutes per variant.)
#   A CPU-limited cluster is warmed up off the record for LT_WARMUP_S=30 s at LT_WARMUP_RPS=50 (a throttled JIT
#   needs longer than the unlimited default of 8 s at 100 rps).
#   AOT=1              the instances start from an AOT cache (JDK 25) trained once, first, the way the image's
#                      build trains its own (rr_aot_train in setup.sh); 0: without (a cold JIT at every start)
#   SHUTDOWN_CONFIG=config/base/base.yaml   the shutdown.* values of the instances (pre-drain-delay,
#                      drain-timeout, cleanup-timeout, metrics-linger, hard-deadline) and its warm-up.timeout (a key it
#                      does not set: the default of src/main/resources/application.yaml); an LT_PRE_DRAIN,
#                      LT_DRAIN_TIMEOUT, LT_CLEANUP_TIMEOUT, LT_METRICS_LINGER, LT_HARD_DEADLINE or LT_WARMUP_TIMEOUT
#                      given wins; "none": lib.sh's values
#   Peak criteria: LT_PEAK_STEP_S=63 (LT_PEAK_SKIP_S 3 + 60 s judged), LT_PEAK_MAX_ERRORS=0, LT_PEAK_P99_MS=500,
#   LT_PEAK_MIN_THROUGHPUT_PCT=95, LT_PEAK_START_RPS=100, LT_PEAK_REFINE=2; LT_BUDGET_S=3600.
# Every other setting is the load tests' local one (lib.sh: simulated issuer, development API key, loopback).
# Bounded: runs that would start after the budget are skipped and listed in the report; every process started here is
# killed on exit or Ctrl+C, and every cgroup made here removed.
#
# SMOKE=1 (a few seconds; results and report under target/load-tests-smoke/rolling-restart/): PEAK_RPS=50 instead of
# the search, MODES=graceful, INSTANCES=1, one roll inside a 7 s load (Gatling started without Maven, C1 only); still
# on PostgreSQL in CPU-limited cgroups (INSTANCE_CPU=1 STORE_CPU=1; without write access to the cgroups, as a
# non-root user, it runs unlimited and the report says so), with the staging shutdown budgets except pre-drain-delay
# and metrics-linger (PT1S each, lib.sh's smoke value and a shorter linger: they are waits) and warm-up.timeout (PT3S).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=setup.sh
source "$HERE/setup.sh"
if [ "${SMOKE:-0}" = 1 ]; then
  PEAK_RPS=${PEAK_RPS:-50} MODES=${MODES:-graceful} INSTANCES=${INSTANCES:-1} MIN_REQUESTS=${MIN_REQUESTS:-1}
  WARMUP_S=${WARMUP_S:-1} ROLL_S=${ROLL_S:-6} ROLL_GAP_S=${ROLL_GAP_S:-0} MIN_ROLLS=${MIN_ROLLS:-1}
  MAX_ROLLS=${MAX_ROLLS:-1} READY_TIMEOUT_S=${READY_TIMEOUT_S:-60} MIN_READY_S=${MIN_READY_S:-0}
  INSTANCE_CPU=${INSTANCE_CPU:-1} STORE_CPU=${STORE_CPU:-1} LT_PRE_DRAIN=${LT_PRE_DRAIN:-PT1S} AOT=${AOT:-0}
  LT_METRICS_LINGER=${LT_METRICS_LINGER:-PT1S} SURGE_RESERVE=${SURGE_RESERVE:-0}
  LT_WARMUP_TIMEOUT=${LT_WARMUP_TIMEOUT:-PT3S}
fi
STORE="${STORE:-postgres}"
INSTANCE_CPU="${INSTANCE_CPU:-0.5}"
STORE_CPU="${STORE_CPU:-1}"
SHUTDOWN_CONFIG="${SHUTDOWN_CONFIG:-config/base/base.yaml}"
AOT="${AOT:-1}"
SURGE_RESERVE="${SURGE_RESERVE:-1}"
case "$STORE" in
  postgres|redis|memory) ;;
  *) echo "STORE must be postgres, redis or memory, not '$STORE'" >&2; exit 2 ;;
esac
for knob in INSTANCE_CPU STORE_CPU; do
  [[ "${!knob}" =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "$knob: a number of CPUs (0.3), 0 for no limit, not '${!knob}'" >&2; exit 2; }
done
rr_shutdown_config "$SHUTDOWN_CONFIG"   # before lib.sh: its defaults fill only what is still unset
if [ "${SMOKE:-0}" != 1 ] && rr_is_limit "$INSTANCE_CPU"; then LT_WARMUP_S="${LT_WARMUP_S:-30}" LT_WARMUP_RPS="${LT_WARMUP_RPS:-50}"; fi
# The peak: 0 errors and p99 <= 500 ms over 60 s (after the client's 3 s of JIT warm-up), then two halvings of the
# gap between the last rate that held and the first that did not; from 100 rps (CPU-limited instances are slower).
LT_PEAK_STEP_S="${LT_PEAK_STEP_S:-63}" LT_PEAK_REFINE="${LT_PEAK_REFINE:-2}" LT_PEAK_START_RPS="${LT_PEAK_START_RPS:-100}"
LT_BUDGET_S="${LT_BUDGET_S:-3600}"   # before lib.sh, whose default (570 s) suits the shorter drain scenario
# shellcheck source=../lib/lib.sh
source "$HERE/../lib/lib.sh"

MODES="${MODES:-graceful naive}"
LEVELS="${LEVELS:-100}"
INSTANCES="${INSTANCES:-2}"
MIN_REQUESTS="${MIN_REQUESTS:-100000}"
# Steady state before the first roll. CPU-limited instances warmed at 50 rps were still settling at the level's rate
# after 10 s (p99 1,229 ms in the first 2 s, 409 ms at 8-10 s), and the first replacement's boot then cost the two old
# ones every failure of the 20:10 run: 60 s, as running pods have had long before a deploy.
if rr_is_limit "$INSTANCE_CPU"; then WARMUP_S="${WARMUP_S:-60}"; fi
WARMUP_S="${WARMUP_S:-10}"
# Off the record before each level, at the level's rate (0: none; a smoke run has none).
if [ "${SMOKE:-0}" != 1 ] && rr_is_limit "$INSTANCE_CPU"; then LEVEL_WARMUP_S="${LEVEL_WARMUP_S:-30}"; fi
LEVEL_WARMUP_S="${LEVEL_WARMUP_S:-0}"
[[ "$LEVEL_WARMUP_S" =~ ^[0-9]+$ ]] || { echo "LEVEL_WARMUP_S: whole seconds, not '$LEVEL_WARMUP_S'" >&2; exit 2; }
# The Deployment's minReadySeconds: a replacement serves its share this long, beside the instance it replaces, before
# that one gets its SIGTERM.
MIN_READY_S="${MIN_READY_S:-$(sed -n 's/^ *minReadySeconds: *\([0-9][0-9]*\).*/\1/p' k8s/base/deployment.yaml)}"
[[ "$MIN_READY_S" =~ ^[0-9]+$ ]] || { echo "MIN_READY_S: whole seconds (k8s/base/deployment.yaml's minReadySeconds), not '$MIN_READY_S'" >&2; exit 2; }
if rr_is_limit "$INSTANCE_CPU"; then ROLL_S="${ROLL_S:-$((100 + INSTANCES * MIN_READY_S))}"; fi   # a CPU-limited JVM starts slowly
ROLL_S="${ROLL_S:-$((50 + INSTANCES * MIN_READY_S))}"
ROLL_GAP_S="${ROLL_GAP_S:-20}"
MAX_ROLLS="${MAX_ROLLS:-4}"
MIN_ROLLS="${MIN_ROLLS:-2}"         # the load lasts long enough for this many rolls
READY_TIMEOUT_S="${READY_TIMEOUT_S:-180}"   # a replacement not ready by then aborts the scenario
LT_READY_TIMEOUT_S="${LT_READY_TIMEOUT_S:-$READY_TIMEOUT_S}"   # the same for the instances of a new cluster
[ $((INSTANCES * 2)) -le "$LT_SLOTS" ] || { echo "INSTANCES * 2 must be <= LT_SLOTS ($LT_SLOTS)" >&2; exit 2; }

lt_init rolling-restart
lt_log "results in $LT_RESULTS"
rr_cgroups_init
LT_STOP_HOOKS+=(rr_surge_reserve_stop)   # on any exit, before lib.sh waits for its children and the cgroups go
rr_store_start
rr_aot_train
printf '{"store": "%s", "store_description": "%s", "cgroups": "%s", "instance_cpu": %s, "store_cpu": %s, "shutdown_config": "%s", "shutdown": {%s}, "aot_cache": "%s", "cluster_warmup_s": %s, "cluster_warmup_rps": %s, "surge_reserve": %s}\n' \
  "$STORE" "$RR_STORE_DESCRIPTION" "$RR_CGROUPS" "$INSTANCE_CPU" "$STORE_CPU" "$SHUTDOWN_CONFIG" \
  "$RR_SHUTDOWN_SOURCES" "$RR_AOT_DESCRIPTION" "${LT_WARMUP_S:-8}" "${LT_WARMUP_RPS:-100}" \
  "$( [ "$SURGE_RESERVE" = 1 ] && [ -n "${CG_LT_VERSION:-}" ] && rr_is_limit "$INSTANCE_CPU" && echo "$INSTANCE_CPU" || echo 0)" \
  >"$LT_RESULTS/setup.json"
lt_gatling_build
if [ -n "${PEAK_FROM:-}" ]; then   # the peak search of an earlier results directory (same machine, same setup)
  "$PY" - "$PEAK_FROM/peak.json" "$(basename "$PEAK_FROM")" >"$LT_RESULTS/peak.json" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["from_results"] = sys.argv[2]
print(json.dumps(d))
PYEOF
  PEAK_RPS="$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["peak_rps"])' "$LT_RESULTS/peak.json")"
elif [ -z "${PEAK_RPS:-}" ]; then
  rr_surge_reserve_start
  lt_measure_peak "$INSTANCES"
  rr_cgroups_drop_instances
else
  echo "{\"peak_rps\": $PEAK_RPS, \"given\": true, \"client\": \"gatling\"}" >"$LT_RESULTS/peak.json"
fi

BASE_JAVA_OPTS="$LT_JAVA_OPTS"
for variant in $MODES; do
  case "$variant" in
    graceful) mode=graceful; ROLL_KIND=warmup; LT_JAVA_OPTS="$BASE_JAVA_OPTS" ;;
    graceful-nowarmup) mode=graceful; ROLL_KIND=nowarmup; LT_JAVA_OPTS="$BASE_JAVA_OPTS -Dwarm-up.requests=0" ;;
    naive) mode=naive; ROLL_KIND=warmup; LT_JAVA_OPTS="$BASE_JAVA_OPTS" ;;
    *) echo "unknown variant $variant (graceful, graceful-nowarmup, naive)" >&2; exit 2 ;;
  esac
  lt_new_run "cluster-$variant"
  rr_surge_reserve_start
  lt_start_cluster "$mode" "$INSTANCES"
  running="$(seq -s ' ' 1 "$INSTANCES")"
  spare="$(seq -s ' ' $((INSTANCES + 1)) $((INSTANCES * 2)))"
  for level in $LEVELS; do
    if ! lt_time_left; then
      lt_log "time budget of $LT_BUDGET_S s used up: skipping $variant at $level%"
      echo "$variant-$level" >>"$LT_RESULTS/skipped.txt"
      continue
    fi
    rate=$(( PEAK_RPS * level / 100 ))
    # >= MIN_REQUESTS, and long enough for the roll (ROLL_S, generous on a busy box) plus steady state around it
    duration=$(( (MIN_REQUESTS + rate - 1) / rate ))
    # ...and for MIN_ROLLS rolls with their gaps and a tail of steady state
    min_duration=$(( WARMUP_S + MIN_ROLLS * ROLL_S + MIN_ROLLS * ROLL_GAP_S ))
    [ "$duration" -ge "$min_duration" ] || duration=$min_duration
    lt_new_run "$variant-$level"
    printf '{"mode": "%s", "variant": "%s", "java_opts": "%s", "client": "%s", "duration_s": %s, "warmup_s": %s, "skip_s": %s, "lag_limit_ms": %s, "level_pct": %s, "rate_rps": %s, "instances": %s, "pre_drain_delay": "%s", "drain_timeout": "%s", "cleanup_timeout": "%s", "metrics_linger": "%s", "hard_deadline": "%s", "check_inter_ms": %s, "check_fall": %s, "check_rise": %s, "check_timeout_ms": %s, "simulated_latency": "%s", "simulated_jitter": "%s", "store": "%s", "instance_cpu": %s, "store_cpu": %s, "min_ready_s": %s, "level_warmup_s": %s}\n' \
      "$mode" "$variant" "${LT_JAVA_OPTS# }" gatling "$duration" "$WARMUP_S" "$LT_PEAK_SKIP_S" "$LT_LAG_LIMIT_MS" "$level" "$rate" "$INSTANCES" "$LT_PRE_DRAIN" \
      "$LT_DRAIN_TIMEOUT" "$LT_CLEANUP_TIMEOUT" "$LT_METRICS_LINGER" "$LT_HARD_DEADLINE" "$LT_CHECK_INTER_MS" "$LT_CHECK_FALL" "$LT_CHECK_RISE" \
      "$LT_CHECK_TIMEOUT_MS" "$LT_LATENCY" "$LT_JITTER" "$STORE" "$INSTANCE_CPU" "$STORE_CPU" "$MIN_READY_S" "$LEVEL_WARMUP_S" >"$LT_RUN_DIR/run.json"
    lt_log "run $variant at $level% = $rate rps for $duration s: restarting s${running// /, s} into s${spare// /, s}"
    for old in $running; do   # baseline: what the running instances decided before this run (warm-up, earlier runs)
      echo "s$old,$(lt_scrape_invocations "$old")" >>"$LT_RUN_DIR/invocations-baseline.csv"
    done
    rr_cgroups_snapshot start
    # The level's own rate first, off the record, from the same client run: running pods have served it long before
    # a deploy. Warmed at 50 rps only, the instances took 200 rps cold (427 failures in the first 22 s of the 20:49
    # run, before any roll); a separate warm-up run left the new client's own start (its JIT, on the same two cores)
    # at the head of the measured load (267 failures in its first 5 s in a trial). lt_client_start returns when the
    # first measured row is written.
    LT_OFF_RECORD_S=$LEVEL_WARMUP_S lt_client_start "$rate" "$((duration + LEVEL_WARMUP_S))" "$LT_RUN_DIR/requests.csv" "$variant-$level-$(lt_now_ms)"
    load_end_ms=$(( $(lt_now_ms) + duration * 1000 ))
    sleep "$WARMUP_S"
    # Rolls inside the load, ROLL_GAP_S of steady state between them, while another one fits before the load ends
    # (at most MAX_ROLLS).
    roll=0
    while :; do
      roll=$((roll + 1))
      kind=$ROLL_KIND
      extra=()
      [ "$kind" = nowarmup ] && extra=(-Dwarm-up.requests=0)
      lt_event roll-start "" "$kind"
      # shellcheck disable=SC2086  # split on purpose: one slot per word
      set -- $spare
      for old in $running; do
        new=$1
        shift
        rr_surge_reserve_pause                             # the replacement's CPU, no longer the stand-in's
        lt_start_instance "$new" "$mode" "${extra[@]}"   # maxSurge 1: the replacement first...
        lt_wait_ready "$new" "$READY_TIMEOUT_S"          # ...Ready (what the Deployment controller waits for)...
        sleep "$MIN_READY_S"                             # ...for minReadySeconds, serving its share beside the old...
        lt_sigterm_watched "$old" "$LT_RUN_DIR/shutdown-r$roll-s$old.json"   # ...then the old one: maxUnavailable 0
        rr_surge_reserve_resume
        lt_log "  roll $roll ($kind): s$old -> s$new: old exited with status $LT_EXIT_STATUS"
      done
      lt_event roll-done "" "$kind"
      tmp="$running"; running="$spare"; spare="$tmp"
      [ "$roll" -lt "$MAX_ROLLS" ] || break
      [ $(( load_end_ms - $(lt_now_ms) )) -gt $(( (ROLL_GAP_S + ROLL_S) * 1000 )) ] || break
      sleep "$ROLL_GAP_S"
    done
    # The load goes on until its planned end (steady state after the last roll; >= MIN_REQUESTS in all).
    lt_client_wait
    rr_cgroups_snapshot end
    # Authorizations decided by the instances still running (the old ones were scraped during their shutdown).
    for new in $running; do
      echo "s$new,$(lt_scrape_invocations "$new")" >>"$LT_RUN_DIR/invocations-survivors.csv"
    done
    lt_end_run
    lt_log "  $("$PY" "$LT_DIR/lib/loadstats.py" summarize "$LT_RUN_DIR/requests.csv" | cut -c1-400)"
  done
  lt_stop_all
  rr_cgroups_drop_instances
done

rr_surge_reserve_stop
"$PY" "$HERE/report.py" "$LT_RESULTS" "$LT_REPORTS_DIR"
lt_log "report: $LT_REPORTS_DIR/rolling-restart.md (results: $LT_RESULTS)"
