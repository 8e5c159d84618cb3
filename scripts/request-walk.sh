#!/usr/bin/env bash
# The request's walk: which project classes one POST /v1/authorizations executes, counted by JaCoCo.
#
#   scripts/request-walk.sh          # prints the classes and the count; details in target/request-walk/
#
# Starts the packaged jar (built when missing) on the dev config (in-memory store, the development key) with the
# JaCoCo agent in tcpserver mode, a JDWP port on 127.0.0.1 and the warm-up off, waits until it is ready, then runs
# scripts/RequestWalk.java: it suspends the threads that run on their own schedule (background workers, loopback
# prober, lease renewer, request-deadline sweepers) while they wait, resets the coverage (start-up is not counted),
# sends exactly one POST /v1/authorizations (the README's), dumps the coverage and lists every com.example.payments
# class with a line executed, grouped by source file: the count is of source files, nested classes ($Inner) listed
# beside their file and counted in the second number. A window in which a background worker ran anyway is refused
# and the measurement retried with a fresh service (3 tries).
# The JaCoCo agent and CLI come from Maven Central through ./mvnw dependency:copy (offline when ~/.m2 has them).
# Writes target/request-walk/{classes.txt,request.exec,service.log}; exit 0 when measured.
set -euo pipefail
cd "$(dirname "$0")/.."

JACOCO_VERSION="${JACOCO_VERSION:-0.8.15}"
out=target/request-walk
mkdir -p "$out"

if [ -z "${JAVA_HOME:-}" ] || ! "$JAVA_HOME/bin/java" -version 2>&1 | grep -qE 'version "(2[1-9]|[3-9][0-9])'; then
  for candidate in /usr/lib/jvm/temurin-25-jdk-amd64 /usr/lib/jvm/*; do
    if [ -x "$candidate/bin/javac" ] && "$candidate/bin/java" -version 2>&1 | grep -qE 'version "(2[1-9]|[3-9][0-9])'; then
      JAVA_HOME="$candidate"
      break
    fi
  done
fi
[ -n "${JAVA_HOME:-}" ] || { echo "no JDK >= 21: set JAVA_HOME" >&2; exit 1; }
export JAVA_HOME PATH="$JAVA_HOME/bin:$PATH"

jar_name="$(sed -n 's/^jar=//p' target/jar.properties 2>/dev/null || true)"
if [ -z "$jar_name" ] || [ ! -f "target/$jar_name" ] || [ ! -d target/libs ]; then
  echo "building the jar" >&2
  ./mvnw -B -q -DskipTests package
  jar_name="$(sed -n 's/^jar=//p' target/jar.properties)"
fi
jar="target/$jar_name"

fetch() { # artifact coordinates, file name in $out
  [ -s "$out/$2" ] && return
  local args=(-B -q dependency:copy "-Dartifact=$1" "-DoutputDirectory=$out" -Dmdep.stripVersion=true
              -Dmdep.stripClassifier=true)
  ./mvnw -o "${args[@]}" >/dev/null 2>&1 || ./mvnw "${args[@]}"
}
fetch "org.jacoco:org.jacoco.agent:$JACOCO_VERSION:jar:runtime" org.jacoco.agent.jar
fetch "org.jacoco:org.jacoco.cli:$JACOCO_VERSION:jar:nodeps" org.jacoco.cli.jar

free_port() {
  local port
  for port in $(shuf -i 20000-29999 -n 50); do
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return
    fi
  done
  echo "no free port" >&2
  exit 1
}

pid=""
stop_service() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  pid=""
}
trap stop_service EXIT
trap 'exit 130' INT TERM

measure() {
  local jacoco_port jdwp_port business_port health_port line
  jacoco_port="$(free_port)"
  jdwp_port="$(free_port)"
  APP_CONFIG_FILE=config/dev/config.yaml java \
    "-javaagent:$out/org.jacoco.agent.jar=output=tcpserver,address=127.0.0.1,port=$jacoco_port,includes=com.example.payments.*" \
    "-agentlib:jdwp=transport=dt_socket,server=y,suspend=n,address=127.0.0.1:$jdwp_port" \
    -Dwarm-up.requests=0 -Dserver.port=0 -Dhealth-server.port=0 \
    -jar "$jar" >"$out/service.log" 2>&1 &
  pid=$!
  for _ in $(seq 600); do
    line="$(grep -oE 'serving business traffic on port [0-9]+, health probes and metrics on port [0-9]+' \
            "$out/service.log" || true)"
    [ -n "$line" ] && break
    kill -0 "$pid" 2>/dev/null || { cat "$out/service.log" >&2; echo "the service exited" >&2; exit 1; }
    sleep 0.1
  done
  [ -n "$line" ] || { echo "the service did not start within 60 s" >&2; exit 1; }
  business_port="$(sed -E 's/.*business traffic on port ([0-9]+).*/\1/' <<<"$line")"
  health_port="$(sed -E 's/.*metrics on port ([0-9]+).*/\1/' <<<"$line")"
  for _ in $(seq 300); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$health_port/health/ready")" = 200 ] && break
    sleep 0.1
  done
  local rc=0
  java -cp "$out/org.jacoco.cli.jar" scripts/RequestWalk.java "$jacoco_port" "$jdwp_port" "$business_port" "$jar" "$out" || rc=$?
  stop_service
  return "$rc"
}

for try in 1 2 3; do
  rc=0
  measure || rc=$?
  [ "$rc" = 3 ] || exit "$rc"
  echo "try $try: a background worker ran during the request; again with a fresh service" >&2
done
exit 3
