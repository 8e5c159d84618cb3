#!/usr/bin/env bash
# One access-log line through the real logging pipeline (JMH, AccessLogLineBenchmark, test scope): builds the test
# classes, then runs the benchmark in a JVM of its own. Extra arguments go to JMH (e.g. -wi 2 -i 3 for a short run);
# BENCHMARK=AccessLogLineBenchmark.accessLogLine runs one of its methods only. Bounded: about 70 s of measurement with
# the defaults. Writes JMH's output and a summary of the CPU time per line (report.py: median and quartiles of the
# iterations' thread CPU clocks, per benchmark) to load-tests/reports/access-log-line-<UTC time>.md; the committed
# load-tests/reports/access-log-line.md is the written-up run.
#
# A benchmark that throws fails the run (-foe true), so no report leaves one out silently.
#
# SMOKE=1: one warm-up and one measured iteration of 200 ms per benchmark (and one burst each for burstOfLines), every
# JVM with LT_SMOKE_JVM_OPTS (C1 only, the serial collector), the report under
# target/load-tests-smoke/access-log-line/reports/ (see lib/lib.sh). With LT_TEST_CLASSPATH (the test class path, as
# LoadTestSmokeIT passes its own) no Maven build runs first.
set -euo pipefail
cd "$(dirname "$0")/../.."
JAVA=${JAVA_HOME:+$JAVA_HOME/bin/}java
# shellcheck source=../lib/lib.sh
source load-tests/lib/lib.sh
JMH_ARGS=(-foe true)
HOST_OPTS=()
if [ "$LT_SMOKE" = 1 ]; then
  JMH_ARGS+=(-wi 1 -w 200ms -i 1 -r 200ms)
  # JMH's forks start with the host JVM's options, then the benchmark's own @Fork(jvmArgsAppend) flags.
  read -ra HOST_OPTS <<<"$LT_SMOKE_JVM_OPTS"
fi
[ -x "$PY" ] || { echo "missing: python3 (Debian: apt-get install -y python3)" >&2; exit 2; }
classpath="${LT_TEST_CLASSPATH:-}"
if [ -z "$classpath" ]; then
  nice ./mvnw -q -o test-compile dependency:build-classpath -Dmdep.includeScope=test \
      -Dmdep.outputFile=target/test-classpath.txt >/dev/null
  classpath="target/test-classes:target/classes:$(cat target/test-classpath.txt)"
fi
lt_output access-log-line
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUTPUT="$LT_RESULTS_DIR/access-log-line-$STAMP.txt"
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
# JMH's console (with each iteration's "cpu per call" line) to the results file; its own result table beside it.
nice "$JAVA" "${HOST_OPTS[@]}" -cp "$classpath" org.openjdk.jmh.Main "${BENCHMARK:-AccessLogLineBenchmark}" "${JMH_ARGS[@]}" \
    -rf text -rff "$LT_RESULTS_DIR/access-log-line-$STAMP.jmh.txt" "$@" | tee "$OUTPUT"
REPORT="$LT_REPORTS_DIR/access-log-line-$STAMP.md"
"$PY" load-tests/access-log-line/report.py "$OUTPUT" "$LT_RESULTS_DIR/access-log-line-$STAMP.jmh.txt" \
    --smoke "$LT_SMOKE" --load-before "$LOAD_BEFORE" --java "$("$JAVA" -version 2>&1 | head -1)" >"$REPORT"
cat "$REPORT"
