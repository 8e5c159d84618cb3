#!/usr/bin/env bash
# One access-log line through the real logging pipeline (JMH, AccessLogLineBenchmark, test scope): builds the test
# classes, then runs the benchmark in a JVM of its own. Extra arguments go to JMH (e.g. -wi 2 -i 3 for a short run);
# BENCHMARK=AccessLogLineBenchmark.accessLogLine runs one of its methods only. Bounded: about 70 s of measurement with the defaults. Report: load-tests/reports/access-log-line.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
nice ./mvnw -q -o test-compile dependency:build-classpath -Dmdep.includeScope=test \
    -Dmdep.outputFile=target/test-classpath.txt >/dev/null
classpath="target/test-classes:target/classes:$(cat target/test-classpath.txt)"
nice java -cp "$classpath" org.openjdk.jmh.Main "${BENCHMARK:-AccessLogLineBenchmark}" -rf text -rff target/access-log-line.txt "$@"
