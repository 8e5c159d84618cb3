#!/usr/bin/env bash
# Drain measurement: SIGTERM to one instance under load, RUNS times per load level, through HAProxy on 127.0.0.1.
#
#   load-tests/drain/run.sh
#
# Peak: PEAK_RPS if given, else the peak.json of the newest rolling-restart results with this setup (in-memory stores,
# no CPU limits: STORE=memory INSTANCE_CPU=0 there), else measured here first (see lt_measure_peak in ../lib/lib.sh).
# Each run: INSTANCES graceful instances are up; the load runs at LEVEL% of the peak; after WARMUP_S one of them
# gets SIGTERM and drainwatch.py times readiness 503, HAProxy removal, listener close, the final metrics scrape
# and the exit; the load stops TAIL_S later. Then a replacement starts (after the exit, so that JVM start-up does
# not compete with the drain being measured), must be ready and in HAProxy, and is warmed up off the record
# before the next run.
# Writes load-tests/reports/drain.md from the results.
#
# Settings: LEVELS="25 75 100" RUNS=5 INSTANCES=2 PEAK_RPS= WARMUP_S=3 TAIL_S=1 PRESTOP_S=5 (the preStop sleep the
# recommendation adds) and the LT_* variables of ../lib/lib.sh. Bounded: about 6-8 minutes with a
# known peak on a 2-core machine; every process started here is killed on exit or Ctrl+C.
#
# SMOKE=1 (a few seconds; results and report under target/load-tests-smoke/drain/): PEAK_RPS=50, LEVELS=100, RUNS=1,
# WARMUP_S=1.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
if [ "${SMOKE:-0}" = 1 ]; then
  PEAK_RPS=${PEAK_RPS:-50} LEVELS=${LEVELS:-100} RUNS=${RUNS:-1} WARMUP_S=${WARMUP_S:-1}
fi
# shellcheck source=../lib/lib.sh
source "$HERE/../lib/lib.sh"

LEVELS="${LEVELS:-25 75 100}"
RUNS="${RUNS:-5}"
INSTANCES="${INSTANCES:-2}"
WARMUP_S="${WARMUP_S:-3}"
TAIL_S="${TAIL_S:-1}"
export PRESTOP_S="${PRESTOP_S:-5}"
[ "$INSTANCES" -le "$LT_SLOTS" ] || { echo "INSTANCES must be <= LT_SLOTS ($LT_SLOTS)" >&2; exit 2; }

lt_init drain
lt_log "results in $LT_RESULTS"
if [ -n "${PEAK_RPS:-}" ]; then
  echo "{\"peak_rps\": $PEAK_RPS, \"given\": true}" >"$LT_RESULTS/peak.json"
else
  # the newest with the same setup: a rolling restart on PostgreSQL or in CPU-limited cgroups has a peak of its own
  latest="$(ls -1d "$LT_RESULTS_DIR"/rolling-restart-*/ 2>/dev/null | sort | "$PY" -c '
import json, sys
for d in sys.stdin.read().split():
    try:
        s = json.load(open(d + "setup.json"))
    except OSError:
        s = {}
    if s.get("store", "memory") == "memory" and not str(s.get("cgroups", "none")).startswith("v"):
        print(d)' | tail -1 || true)"
  if [ -n "$latest" ] && [ -f "$latest/peak.json" ]; then
    PEAK_RPS="$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["peak_rps"])' "$latest/peak.json")"
    "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); d["from"]=sys.argv[2]; print(json.dumps(d))' \
      "$latest/peak.json" "$(basename "$latest")" >"$LT_RESULTS/peak.json"
    lt_log "peak $PEAK_RPS rps, from $(basename "$latest")"
  else
    lt_measure_peak "$INSTANCES"
  fi
fi

# One HAProxy for all runs; the victims take turns.
lt_new_run cluster
lt_start_cluster graceful "$INSTANCES"
victim=1
runs_left=$(( $(wc -w <<<"$LEVELS") * RUNS ))
for level in $LEVELS; do
  rate=$(( PEAK_RPS * level / 100 ))
  for run in $(seq 1 "$RUNS"); do
    name="$level-$run"
    if ! lt_time_left; then
      lt_log "time budget of $LT_BUDGET_S s used up: skipping $level% run $run"
      echo "$name" >>"$LT_RESULTS/skipped.txt"
      continue
    fi
    cluster_log="$LT_RUN_DIR"
    lt_new_run "$name"
    printf '{"level_pct": %s, "run": %s, "rate_rps": %s, "instances": %s, "victim": "s%s", "pre_drain_delay": "%s", "check_inter_ms": %s, "check_timeout_ms": %s, "check_fall": %s, "simulated_latency": "%s", "simulated_jitter": "%s"}\n' \
      "$level" "$run" "$rate" "$INSTANCES" "$victim" "$LT_PRE_DRAIN" "$LT_CHECK_INTER_MS" "$LT_CHECK_TIMEOUT_MS" "$LT_CHECK_FALL" \
      "$LT_LATENCY" "$LT_JITTER" >"$LT_RUN_DIR/run.json"
    lt_client_start "$rate" 120 "$LT_RUN_DIR/requests.csv" "drain$name-$(lt_now_ms)"
    sleep "$WARMUP_S"
    lt_sigterm_watched "$victim" "$LT_RUN_DIR/shutdown.json"
    sleep "$TAIL_S"
    lt_client_stop
    lt_end_run
    lt_log "drain $level% run $run (s$victim, $rate rps): exit $LT_EXIT_STATUS; $(cat "$LT_RUN_DIR"/instance-s*.log | grep -o 'Shutdown summary: [^;]*' || echo 'no summary line')"
    LT_RUN_DIR="$cluster_log"
    runs_left=$((runs_left - 1))
    [ "$runs_left" -gt 0 ] || break   # no next run: no replacement to start
    # the replacement takes the same slot (its ports are free again), ready and in HAProxy before the next run
    lt_start_instance "$victim" graceful
    lt_wait_ready "$victim" 90
    lt_wait_haproxy "$victim" UP 10
    # Warm the new JVM up off the record, straight on its business port: a cold JVM taking half of the next run's
    # load answers its own readiness checks too slowly (see the README) and would be measured instead of the drain.
    lt_client_run 200 6 "$LT_RUN_DIR/warmup-s$victim-$(lt_now_ms).csv" "warmup-$(lt_now_ms)" \
      "$(lt_slot_business_port "$victim")"
    victim=$(( victim % INSTANCES + 1 ))   # next time the instance that has been up longest
  done
done
lt_stop_all

"$PY" "$HERE/report.py" "$LT_RESULTS" "$LT_REPORTS_DIR"
lt_log "report: $LT_REPORTS_DIR/drain.md (results: $LT_RESULTS)"
