#!/usr/bin/env bash
# The kubelet's liveness probe against a flooded health listener, for 30 s per scenario (HealthFloodIT runs the same
# code for 8 s in ./mvnw verify):
#   1. twice health-server.max-tcp-connections (64) held by idle and half-sent connections
#      (`GET /health/live HTTP/1.1\r\nHost: x\r\n` and nothing more), each reopened as the server closes it;
#   2. the same while 64 closed-loop clients POST /v1/authorizations (a new Idempotency-Key each) to the business port
#      of a JVM limited to one CPU (taskset -c 0, -XX:ActiveProcessorCount=1).
# Meanwhile a probe every second, like the kubelet's: a fresh connection, GET /health/live, Connection: close, 1 s
# from the connect to the status line. Writes load-tests/reports/health-flood-<UTC time>.md with every probe's
# latency, max, p99 and answered / sent. Loopback only; the service and the clients are stopped when the test ends.
#
# Needs: JAVA_HOME (JDK 21+), taskset (util-linux). Knobs: SECONDS_PER_SCENARIO (30).
# SMOKE=1: 3 s per scenario, the report under target/ instead of load-tests/reports/.
set -euo pipefail

cd "$(dirname "$0")/../.."
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
if [ "${SMOKE:-0}" = 1 ]; then
  SECONDS_PER_SCENARIO=${SECONDS_PER_SCENARIO:-3}
  REPORT="$PWD/target/health-flood-smoke-$STAMP.md"
else
  SECONDS_PER_SCENARIO=${SECONDS_PER_SCENARIO:-30}
  REPORT="$PWD/load-tests/reports/health-flood-$STAMP.md"
fi
JAVA=${JAVA_HOME:+$JAVA_HOME/bin/}java
command -v taskset >/dev/null || { echo "missing: taskset (apt-get install -y util-linux)" >&2; exit 2; }
mkdir -p "$(dirname "$REPORT")"

{
  echo "# Liveness probes against a flooded health listener"
  echo
  echo "Measured $(date -u +%Y-%m-%dT%H:%MZ) by \`load-tests/health-flood/run.sh\` (\`HealthFloodIT\`, $SECONDS_PER_SCENARIO s per"
  echo "scenario) on one machine: $(nproc) cores, $("$JAVA" -version 2>&1 | head -1)."
  echo "Load average (1/5/15 min) before: $(cut -d' ' -f1-3 /proc/loadavg)."
  echo
  echo "Health listener: \`health-server.max-tcp-connections\` 32. The holders keep 64 connections open, half idle, half"
  echo "half-sent (\`GET /health/live HTTP/1.1\\r\\nHost: x\\r\\n\`), each reopened as the server closes it. A probe every"
  echo "second: fresh connection, \`GET /health/live\`, \`Connection: close\`, answered = a status line within 1 s of"
  echo "the connect. Latency is connect to status line (a probe without an answer counts its wait)."
} > "$REPORT"

status=0
./mvnw -B -q -o -DskipTests package
./mvnw -B -o verify -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false -Dit.test=HealthFloodIT \
  -Dfailsafe.failIfNoSpecifiedTests=false -Dhealth-flood.seconds="$SECONDS_PER_SCENARIO" \
  -Dhealth-flood.report="$REPORT" | grep -E 'HealthFloodIT|Tests run:|FAIL' || status=$?
echo >> "$REPORT"
echo "Load average after: $(cut -d' ' -f1-3 /proc/loadavg)." >> "$REPORT"
echo "report: $REPORT"
exit "$status"
