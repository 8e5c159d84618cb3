#!/usr/bin/env bash
# Rolling restart under load, graceful vs naive shutdown, through HAProxy on 127.0.0.1.
#
#   load-tests/rolling-restart/run.sh
#
# 1. Measures the peak (lt_measure_peak in lib.sh: climbs until the service fails), unless PEAK_RPS is given.
# 2. For each variant in MODES: HAProxy and INSTANCES fresh instances, warmed up off the record; then for each
#    load level in LEVELS (% of the peak): a constant-rate open-model load through HAProxy (Gatling, LT_CLIENT) lasting
#    long enough for MIN_REQUESTS requests, and inside it, after WARMUP_S of steady state, a rolling restart with
#    maxSurge 1 / maxUnavailable 0: for each running instance, start its replacement, wait until /health/ready
#    answers 200, then SIGTERM the old one (timed by ../drain/drainwatch.py) and wait for it to exit. The load goes on
#    after the roll (steady state again) until its planned end. The next level restarts the replacements. Every
#    request's outcome goes to results/<run>/requests.csv.
# 3. Writes load-tests/reports/rolling-restart.md (+ .png) from the results.
#
# Variants: graceful (shutdown.mode=graceful, the service's warm-up before ready as configured by default),
# graceful-nowarmup (the same with warm-up.requests=0), naive (shutdown.mode=naive).
# Settings (environment): MODES="graceful graceful-nowarmup naive" LEVELS="100" INSTANCES=2 PEAK_RPS=
# MIN_REQUESTS=100000 WARMUP_S=10 ROLL_S=50 LT_CLIENT=gatling|python, and the LT_* variables of lib.sh (ports, HAProxy checks,
# pre-drain delay, simulated latency, peak search, client lag limit LT_LAG_LIMIT_MS, time budget LT_BUDGET_S).
# Bounded: runs that would start after the budget are skipped and listed in the report; every process started here is
# killed on exit or Ctrl+C.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
LT_BUDGET_S="${LT_BUDGET_S:-1200}"   # before lib.sh, whose default (570 s) suits the shorter drain scenario
# shellcheck source=lib.sh
source "$HERE/lib.sh"

MODES="${MODES:-graceful graceful-nowarmup naive}"
LEVELS="${LEVELS:-100}"
INSTANCES="${INSTANCES:-2}"
MIN_REQUESTS="${MIN_REQUESTS:-100000}"
WARMUP_S="${WARMUP_S:-10}"
ROLL_S="${ROLL_S:-50}"
[ $((INSTANCES * 2)) -le "$LT_SLOTS" ] || { echo "INSTANCES * 2 must be <= LT_SLOTS ($LT_SLOTS)" >&2; exit 2; }

lt_init rolling-restart
lt_log "results in $LT_RESULTS"
[ "$LT_CLIENT" != gatling ] || lt_gatling_build
if [ -z "${PEAK_RPS:-}" ]; then
  lt_measure_peak "$INSTANCES"
else
  echo "{\"peak_rps\": $PEAK_RPS, \"given\": true, \"client\": \"$LT_CLIENT\"}" >"$LT_RESULTS/peak.json"
fi

BASE_JAVA_OPTS="$LT_JAVA_OPTS"
for variant in $MODES; do
  case "$variant" in
    graceful) mode=graceful; LT_JAVA_OPTS="$BASE_JAVA_OPTS" ;;
    graceful-nowarmup) mode=graceful; LT_JAVA_OPTS="$BASE_JAVA_OPTS -Dwarm-up.requests=0" ;;
    naive) mode=naive; LT_JAVA_OPTS="$BASE_JAVA_OPTS" ;;
    *) echo "unknown variant $variant (graceful, graceful-nowarmup, naive)" >&2; exit 2 ;;
  esac
  lt_new_run "cluster-$variant"
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
    [ "$duration" -ge $((WARMUP_S + ROLL_S)) ] || duration=$((WARMUP_S + ROLL_S))
    lt_new_run "$variant-$level"
    printf '{"mode": "%s", "variant": "%s", "java_opts": "%s", "client": "%s", "duration_s": %s, "warmup_s": %s, "skip_s": %s, "lag_limit_ms": %s, "level_pct": %s, "rate_rps": %s, "instances": %s, "pre_drain_delay": "%s", "check_inter_ms": %s, "check_fall": %s, "check_rise": %s, "check_timeout_ms": %s, "simulated_latency": "%s", "simulated_jitter": "%s"}\n' \
      "$mode" "$variant" "${LT_JAVA_OPTS# }" "$LT_CLIENT" "$duration" "$WARMUP_S" "$LT_PEAK_SKIP_S" "$LT_LAG_LIMIT_MS" "$level" "$rate" "$INSTANCES" "$LT_PRE_DRAIN" "$LT_CHECK_INTER_MS" "$LT_CHECK_FALL" "$LT_CHECK_RISE" \
      "$LT_CHECK_TIMEOUT_MS" "$LT_LATENCY" "$LT_JITTER" >"$LT_RUN_DIR/run.json"
    lt_log "run $variant at $level% = $rate rps for $duration s: restarting s${running// /, s} into s${spare// /, s}"
    for old in $running; do   # baseline: what the running instances decided before this run (warm-up, earlier runs)
      echo "s$old,$(lt_scrape_invocations "$old")" >>"$LT_RUN_DIR/invocations-baseline.csv"
    done
    lt_client_start "$rate" "$duration" "$LT_RUN_DIR/requests.csv" "$variant-$level-$(lt_now_ms)"
    sleep "$WARMUP_S"
    # shellcheck disable=SC2086  # split on purpose: one slot per word
    set -- $spare
    for old in $running; do
      new=$1
      shift
      lt_start_instance "$new" "$mode"        # maxSurge 1: the replacement first...
      lt_wait_ready "$new" 90                 # ...Ready (what the Deployment controller waits for)...
      lt_sigterm_watched "$old" "$LT_RUN_DIR/shutdown-s$old.json"   # ...then the old one: maxUnavailable 0
      lt_log "  s$old -> s$new: old exited with status $LT_EXIT_STATUS"
    done
    lt_event roll-done
    # The load goes on until its planned end (steady state after the roll; >= MIN_REQUESTS in all).
    lt_client_wait
    # Authorizations decided by the replacements so far (the old ones were scraped during their shutdown).
    for new in $spare; do
      echo "s$new,$(lt_scrape_invocations "$new")" >>"$LT_RUN_DIR/invocations-survivors.csv"
    done
    lt_end_run
    lt_log "  $("$PY" "$HERE/loadstats.py" summarize "$LT_RUN_DIR/requests.csv" | cut -c1-400)"
    tmp="$running"; running="$spare"; spare="$tmp"
  done
  lt_stop_all
done

"$PY" "$HERE/report.py" "$LT_RESULTS" "$LT_DIR/reports"
lt_log "report: load-tests/reports/rolling-restart.md (results: $LT_RESULTS)"
