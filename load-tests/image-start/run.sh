#!/usr/bin/env bash
# Start-to-ready of the container image, with and without its AOT cache, measured in one run.
#
#   load-tests/image-start/run.sh            (as root: buildah, mounts and PID namespaces)
#
# Builds the image from the Dockerfile with scripts/build-image.sh (stand-in bases where the public registry is
# unreachable; IMAGE=name skips the build and measures that image), then starts it RUNS times in each mode with
# scripts/run-image.sh, the way the pod runs it, alternating the order (aot, plain, plain, aot, ...) so that the
# machine's load drifts into both alike:
#   aot    the image's ENTRYPOINT as it is (-XX:AOTCache=app.aot)
#   plain  the same, with JDK_JAVA_OPTIONS=-XX:AOTMode=off (the JDK's default CDS archive stays on, as in a plain
#          `java -jar`)
# Each start is timed from PID 1's start to the first 200 of /health/ready, then stopped with SIGTERM to PID 1
# (exit status 0 expected). Writes load-tests/results/image-start-<time>.csv and load-tests/reports/image-start.md.
#
# Settings: RUNS=10 (per mode), IMAGE=. Bounded: about 4-6 minutes on 2 cores plus the build (1-3 minutes).
# SMOKE=1: RUNS=1; the CSV and the report go to target/load-tests-smoke/image-start/ (see ../lib/lib.sh). With IMAGE
# (LoadTestSmokeIT passes the image ContainerImageIT built) a smoke run takes seconds.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
# shellcheck source=../lib/lib.sh
source "$HERE/../lib/lib.sh"
[ "$LT_SMOKE" = 0 ] || RUNS="${RUNS:-1}"
RUNS="${RUNS:-10}"

[[ "$(id -u)" == 0 ]] || { echo "image-start: needs root (buildah, mounts, PID namespaces)" >&2; exit 2; }
image="${IMAGE:-}"
if [[ -z "$image" ]]; then
    image="localhost/payments-authorization:image-start-$$"
    trap 'buildah rmi "$image" >/dev/null 2>&1 || true' EXIT
    "$ROOT/scripts/build-image.sh" "$image"
fi
stamp="$(date -u +%Y%m%dT%H%M%SZ)"
lt_output image-start
/usr/bin/python3 "$HERE/measure.py" --image "$image" --runs "$RUNS" \
    --csv "$LT_RESULTS_DIR/image-start-$stamp.csv" --report "$LT_REPORTS_DIR/image-start.md"
