#!/usr/bin/env bash
# Runs the whole test suite (`./mvnw -B verify`, the README's test command) in a shuffled order and with port reuse
# forced, to show that no test depends on the order the classes and methods run in, or on a port number.
#
#   scripts/shuffled-tests.sh SEED [PORTS]      e.g. scripts/shuffled-tests.sh 20261201
#
# - Order: Surefire and Failsafe run the test classes in random order (runOrder=random, seeded), and JUnit runs the
#   methods of every class in random order (MethodOrderer.Random, seeded); the same SEED gives the same order again.
# - Port reuse: the run gets a network namespace of its own (unshare --net, loopback only) whose ephemeral port
#   range is narrowed to PORTS ports (default 600): every listener on port 0, every "free port" a fixture asks for
#   and every client connection draws from that range, so a port freed by one test is soon handed to the next.
#   Nothing outside the namespace is reachable (also not the machine's own Redis and PostgreSQL: the tests must
#   start their own), so Maven runs offline: run ./mvnw -B verify once first to fill ~/.m2.
# Needs root (unshare --net) and the tools .ci/run installs. Writes target/shuffled-<SEED>.log and prints the
# verdict line with the seed, the test counts and how many ports were bound more than once.
set -euo pipefail
cd "$(dirname "$0")/.."

seed="${1:?usage: scripts/shuffled-tests.sh SEED [PORTS]}"
ports="${2:-600}"
first=40000
last=$((first + ports - 1))
mkdir -p target
log="target/shuffled-${seed}.log"

if [ -z "${JAVA_HOME:-}" ] || ! "$JAVA_HOME/bin/java" -version 2>&1 | grep -qE 'version "(2[1-9]|[3-9][0-9])'; then
  for candidate in /usr/lib/jvm/*; do
    if [ -x "$candidate/bin/javac" ] && "$candidate/bin/java" -version 2>&1 | grep -qE 'version "(2[1-9]|[3-9][0-9])'; then
      JAVA_HOME="$candidate"
      break
    fi
  done
fi
export JAVA_HOME PATH="$JAVA_HOME/bin:$PATH" CI="${CI:-true}"

# kubectl, promtool and the Dockerfile linters, and the SBOM (its plugin refuses to run offline), before the run
# leaves the network: the namespace has none.
bash scripts/install-deploy-tools.sh >/dev/null
./mvnw -B -q -DskipTests package >/dev/null

start=$(date +%s)
set +e
# perl restores SIGINT's default: a job started in the background of a non-interactive shell inherits SIGINT
# ignored, and the tests that stop the service with kill -INT would find it ignored.
unshare --net perl -e '$SIG{INT} = "DEFAULT"; exec @ARGV' bash -c "
  set -e
  ip link set lo up
  sysctl -qw net.ipv4.ip_local_port_range='$first $last'
  exec ./mvnw -B -o verify \
    -Dsurefire.runOrder=random -Dsurefire.runOrder.random.seed='$seed' \
    -Dfailsafe.runOrder=random -Dfailsafe.runOrder.random.seed='$seed' \
    -Djunit.jupiter.testmethod.order.default='org.junit.jupiter.api.MethodOrderer\$Random' \
    -Djunit.jupiter.execution.order.random.seed='$seed'
" >"$log" 2>&1
status=$?
set -e
elapsed=$(( $(date +%s) - start ))

counts=$(grep -E '^\[(INFO|ERROR|WARNING)\] Tests run: [0-9]+, Failures: [0-9]+, Errors: [0-9]+, Skipped: [0-9]+$' "$log" \
         | sed -E 's/^\[[A-Z]+\] //' | tr '\n' ';' || true)
# Ports bound by listeners in the test JVMs (Helidon logs each bind): how many were bound more than once.
reused=$(grep -oE 'http://[0-9.]+:[0-9]+ bound for socket' "$log" | grep -oE ':[0-9]+ ' | sort | uniq -d | wc -l)
bound=$(grep -cE 'http://[0-9.]+:[0-9]+ bound for socket' "$log" || true)
echo "seed=$seed ports=$first-$last exit=$status elapsed=${elapsed}s listeners_bound=$bound ports_bound_again=$reused counts: $counts"
exit "$status"
