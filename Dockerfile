# The operator's image, built from a clean checkout with Docker 23 or later (BuildKit, the default
# builder there, for the cache mount below) and Maven Central reachable from the build:
#   docker build --build-arg GIT_COMMIT="$(git rev-parse HEAD)" -t delayed-task-operator:0.1.0 .
# (GIT_COMMIT is what `--version` prints: .git is not sent to the build; without it, "unknown".)
# Without a Docker daemon, Jib builds the same image from the same base into a tar file:
#   mvn -B -DskipTests package jib:buildTar      (target/jib-image.tar; docker/podman load -i ...)
#
# Base images are pinned by digest (tag kept for the reader); bump the digests together with the
# tag, and keep the runtime digest equal to jib-maven-plugin's <from><image> in pom.xml
# (DockerfileTest checks both).

# --- build stage: the runnable jar, tests left to CI (mvn -B verify) ------------------------------
FROM maven:3.9-eclipse-temurin-17@sha256:a8746f15d5bb26b5b8bacb056cc76211553850f4c71d16aff845cfa004cbc197 AS build
WORKDIR /src
ARG GIT_COMMIT=unknown
COPY pom.xml ./
COPY src/main ./src/main
# The build steps the build runs (src/build/java: compiled apart, not in the jar).
COPY src/build ./src/build
# maven.test.skip: test sources are neither compiled nor their (large) dependencies fetched;
# mdep.skip: the third-party list is checked by the tests, not needed here. No system package is
# installed and nothing runs as root but Maven in this throw-away stage.
RUN --mount=type=cache,target=/root/.m2 \
    DELAYEDTASK_GIT_COMMIT="$GIT_COMMIT" mvn -B -q -Dmaven.test.skip=true -Dmdep.skip=true package

# --- runtime stage: a JRE, the jar and the licences; no package manager run, no shell needed -------
FROM eclipse-temurin:17-jre@sha256:13cc28a6cc72a38ce1f00c906be3580c1a3e604b8984d694f369a96742abc93b

WORKDIR /app
# Owned by root and not writable by the operator user.
COPY --from=build /src/target/delayed-task-operator.jar /app/delayed-task-operator.jar
COPY LICENSE NOTICE THIRD-PARTY-NOTICES.md /licenses/

# Container-aware JVM defaults: the heap follows the memory limit, an OutOfMemoryError ends the
# process (Kubernetes restarts it) instead of leaving it half-alive, temp files go to /tmp (an
# emptyDir when the root filesystem is read-only). The chart/manifests may override JDK_JAVA_OPTIONS.
ENV JDK_JAVA_OPTIONS="-XX:MaxRAMPercentage=60.0 -XX:+ExitOnOutOfMemoryError -Djava.io.tmpdir=/tmp"

# A fixed, numeric non-root uid/gid (the chart's and k8s/ manifests' runAsUser, so the "restricted"
# Pod Security Standard's runAsNonRoot can be verified); no passwd entry is needed for it.
USER 10001:10001
EXPOSE 8080
ENTRYPOINT ["java", "-jar", "/app/delayed-task-operator.jar"]
