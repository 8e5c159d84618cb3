#!/usr/bin/env bash
# Rolling restart under load, graceful vs naive shutdown, through HAProxy on 127.0.0.1.
#
#   load-tests/rolling-restart/run.sh
#
# 1. Measures the peak (see lt_measure_peak in ../lib/lib.sh), unless PEAK_RPS is given.
# 2. For each shutdown.mode in MODES: HAProxy and INSTANCES fresh instances, warmed up off the record; then for each
#    load level in LEVELS (% of the peak): a constant-rate load through HAProxy and a rolling restart with
#    maxSurge 1 / maxUnavailable 0: for each running instance, start its replacement, wait until /health/ready
#    answers 200, then SIGTERM the old one (timed by ../drain/drainwatch.py) and wait for it to exit. The next
#    level restarts the replacements. Every request's outcome goes to results/<run>/requests.csv.
# 3. Writes load-tests/reports/rolling-restart.md (+ .png) from the results.
#
# Settings (environment): MODES="graceful naive" LEVELS="25 75 100" INSTANCES=2 PEAK_RPS= WARMUP_S=5 TAIL_S=3
# and the LT_* variables at the top of ../lib/lib.sh (ports, HAProxy checks, pre-drain delay, simulated latency, the
# time budget LT_BUDGET_S). Bounded: runs that would start after the budget are skipped and listed in the report;
# every process started here is killed on exit or Ctrl+C.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=../lib/lib.sh
source "$HERE/../lib/lib.sh"

MODES="${MODES:-graceful naive}"
LEVELS="${LEVELS:-25 75 100}"
INSTANCES="${INSTANCES:-2}"
WARMUP_S="${WARMUP_S:-5}"
TAIL_S="${TAIL_S:-3}"
[ $((INSTANCES * 2)) -le "$LT_SLOTS" ] || { echo "INSTANCES * 2 must be <= LT_SLOTS ($LT_SLOTS)" >&2; exit 2; }

lt_init rolling-restart
lt_log "results in $LT_RESULTS"
if [ -z "${PEAK_RPS:-}" ]; then
  lt_measure_peak "$INSTANCES"
else
  echo "{\"peak_rps\": $PEAK_RPS, \"given\": true}" >"$LT_RESULTS/peak.json"
fi

for mode in $MODES; do
  lt_new_run "cluster-$mode"
  lt_start_cluster "$mode" "$INSTANCES"
  running="$(seq -s ' ' 1 "$INSTANCES")"
  spare="$(seq -s ' ' $((INSTANCES + 1)) $((INSTANCES * 2)))"
  for level in $LEVELS; do
    if ! lt_time_left; then
      lt_log "time budget of $LT_BUDGET_S s used up: skipping $mode at $level%"
      echo "$mode-$level" >>"$LT_RESULTS/skipped.txt"
      continue
    fi
    rate=$(( PEAK_RPS * level / 100 ))
    lt_new_run "$mode-$level"
    printf '{"mode": "%s", "level_pct": %s, "rate_rps": %s, "instances": %s, "pre_drain_delay": "%s", "check_inter_ms": %s, "check_fall": %s, "check_rise": %s, "check_timeout_ms": %s, "simulated_latency": "%s", "simulated_jitter": "%s"}\n' \
      "$mode" "$level" "$rate" "$INSTANCES" "$LT_PRE_DRAIN" "$LT_CHECK_INTER_MS" "$LT_CHECK_FALL" "$LT_CHECK_RISE" \
      "$LT_CHECK_TIMEOUT_MS" "$LT_LATENCY" "$LT_JITTER" >"$LT_RUN_DIR/run.json"
    lt_log "run $mode at $level% = $rate rps: restarting s${running// /, s} into s${spare// /, s}"
    for old in $running; do   # baseline: what the running instances decided before this run (warm-up, earlier runs)
      echo "s$old,$(lt_scrape_invocations "$old")" >>"$LT_RUN_DIR/invocations-baseline.csv"
    done
    lt_loadgen_start "$rate" 240 "$LT_RUN_DIR/requests.csv"
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
    sleep "$TAIL_S"
    lt_loadgen_stop
    # Authorizations decided by the replacements so far (the old ones were scraped during their shutdown).
    for new in $spare; do
      echo "s$new,$(lt_scrape_invocations "$new")" >>"$LT_RUN_DIR/invocations-survivors.csv"
    done
    lt_end_run
    lt_log "  $(cat "$LT_RUN_DIR/requests.summary.json")"
    tmp="$running"; running="$spare"; spare="$tmp"
  done
  lt_stop_all
done

"$PY" "$HERE/report.py" "$LT_RESULTS" "$LT_DIR/reports"
lt_log "report: load-tests/reports/rolling-restart.md (results: $LT_RESULTS)"
