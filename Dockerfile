# payments-authorization container image: the thin jar and its libs/ on a Temurin JRE, run as a non-root user.
#   docker build -t payments-authorization:dev .
#   docker run --rm -p 8080:8080 -p 8081:8081 payments-authorization:dev
# Base images are pinned by tag. Pin them by digest too once your registry has pulled them: the digests could not be
# looked up where this file was written, and an invented digest would only break the build.
# Both are build arguments, so a build can substitute a mirror or a local stand-in without editing this file
# (scripts/build-image.sh builds on stand-ins where the public registries are unreachable):
#   docker build --build-arg RUNTIME_IMAGE=registry.example.com/eclipse-temurin:25-jre -t payments-authorization:dev .
ARG BUILD_IMAGE=maven:3.9-eclipse-temurin-25
ARG RUNTIME_IMAGE=eclipse-temurin:25-jre

# ---- build ----
FROM ${BUILD_IMAGE} AS build
WORKDIR /build
# Maven runs C1 only with the serial collector, as .mvn/jvm.config has it for ./mvnw: a build of a few hundred classes
# ends before C2's compilations pay off (measured: 15 against 35-44 CPU-s for a compile of the project). Whatever the
# build image's MAVEN_OPTS already holds (a mirror's proxy or trust store) stays, after them.
ENV MAVEN_OPTS="-XX:TieredStopAtLevel=1 -XX:+UseSerialGC ${MAVEN_OPTS}"
# Dependencies first, in a layer of their own: editing sources does not download the world again.
COPY pom.xml ./
RUN mvn -B -q dependency:go-offline
COPY src ./src
# Tests run in CI (they need kubectl, promtool and child JVMs), not in the image build; their sources are not even in
# the build context (.dockerignore), so editing a test does not rebuild the image.
# The jar's name lives in the pom only: the build writes it to target/jar.properties, and the image calls it app.jar.
# The git commit of the sources, for the app_build_info gauge (12 hex digits, as the pom's git plugin gives it): the
# build context has no .git (.dockerignore), so the plugin cannot read it here. scripts/build-image.sh passes it
# (--build-arg REVISION=<commit>). Declared here, after the dependency layer: a build argument is part of the cache
# key of every RUN after it.
# The SBOM (target/bom.json) describes what CI built and uploads; the image does not carry it, so it is not made here.
ARG REVISION=unknown
RUN mvn -B -q package -DskipTests -Dcyclonedx.skip=true -Dgit.commit.id.abbrev="$(printf %.12s "$REVISION")" \
    && . target/jar.properties \
    && mv "target/$jar" target/app.jar

# ---- runtime ----
# JRE 25: what the test suite runs on (the code is compiled for Java 21, the floor).
FROM ${RUNTIME_IMAGE}
RUN groupadd --system --gid 10001 app \
    && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin app
WORKDIR /app
# Helidon's thin-jar layout: libs/ changes only with dependencies, so it gets its own (cached) layer.
COPY --from=build /build/target/libs ./libs
COPY --from=build /build/target/app.jar ./
# AOT cache (JDK 25, JEP 483/514): a training run boots the service, lets its warm-up run (synthetic requests through
# the whole request path, before ready), then SIGTERM stops it gracefully, and the classes it loaded and linked are
# stored in app.aot. It is stopped as soon as the warm-up has logged its result (at most 30 s): nothing after that adds
# classes until the shutdown sequence, which the SIGTERM runs. Same flags as the ENTRYPOINT (DockerfileTest checks it),
# plus -Xmx512m so that a build host with a huge heap does not record uncompressed oops, which the pods (heap < 32 GB)
# could not use, and -XX:-UsePerfData so that it leaves no /tmp/hsperfdata_root in the image. Ports 0: a build may
# share the host's network (buildah's chroot isolation does), where 8080 may be taken. Small connection caps: the
# service refuses to start when its caps do not fit `ulimit -n` (docs/hostile-clients.md), some builders run steps at
# 1024 (buildah does), and the training run serves no traffic. The run's log is printed, then removed.
# The runtime falls back to a normal boot if the cache does not fit. Start-to-ready with and without it:
# load-tests/reports/image-start.md.
RUN java -XX:MaxRAMPercentage=75 -XX:+ExitOnOutOfMemoryError -XX:+UseG1GC -Xmx512m -XX:-UsePerfData \
        -Djava.util.logging.manager=org.apache.logging.log4j.jul.LogManager -Xlog:all=off -Xlog:all=warning:stderr \
        -XX:AOTCacheOutput=app.aot -Dserver.port=0 -Dhealth-server.port=0 \
        -Dserver.max-tcp-connections=64 -Dhealth-server.max-tcp-connections=8 -jar app.jar >/tmp/training.log 2>&1 & \
    pid=$!; tries=0; \
    while [ "$tries" -lt 300 ] && kill -0 "$pid" 2>/dev/null && ! grep -q 'Warm-up' /tmp/training.log; do \
        sleep 0.1; tries=$((tries + 1)); \
    done; \
    sleep 1; kill -TERM "$pid"; status=0; wait "$pid" || status=$?; \
    cat /tmp/training.log; rm -f /tmp/training.log; \
    [ "$status" -eq 0 ] && test -s app.aot
# Numeric, so Kubernetes can verify runAsNonRoot without reading /etc/passwd (k8s/base/deployment.yaml: 10001).
USER 10001:10001
# 8080: business listener (k8s port "http"); 8081: health listener, probes and /metrics (k8s port "health").
EXPOSE 8080 8081
# OCI annotations (opencontainers image-spec, annotations.md), last: a build argument is part of the cache key of
# every RUN after it, and the revision changes with every commit. scripts/build-image.sh passes the pom's version,
# the git commit and the remote's URL; a plain `docker build` without them labels an unversioned local build.
ARG VERSION=unversioned
ARG REVISION=unknown
ARG SOURCE=unknown
LABEL org.opencontainers.image.title="payments-authorization" \
      org.opencontainers.image.description="Card-authorization microservice: honest probes, graceful drain, idempotent API" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.source="${SOURCE}"
# Exec form, no shell: java is PID 1 and receives SIGTERM itself, which starts the graceful shutdown sequence.
# The JVM sizes itself from the container's limits; the heap takes 75% of the memory limit and leaves the rest to
# metaspace, threads and buffers. An out-of-memory JVM exits so the kubelet restarts it, instead of limping on.
# G1 explicitly: below 2 CPUs or 1792 MB the JVM would pick the serial collector, which pauses every request.
# java.util.logging goes to Log4j from the JVM's start (Main sets it too, before its first logger), so Helidon's and every
# library's lines are in the configured format; the JVM's own unified logging (warnings) goes to stderr, so that
# stdout holds log lines only (docs/observability.md#logs).
# Add flags without rebuilding through the JDK_JAVA_OPTIONS environment variable.
ENTRYPOINT ["java", "-XX:MaxRAMPercentage=75", "-XX:+ExitOnOutOfMemoryError", "-XX:+UseG1GC", "-XX:AOTCache=app.aot", "-Djava.util.logging.manager=org.apache.logging.log4j.jul.LogManager", "-Xlog:all=off", "-Xlog:all=warning:stderr", "-jar", "app.jar"]
