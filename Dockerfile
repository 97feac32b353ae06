# Runtime image of the operator. Build the jar first (mvn -B -DskipTests package), then:
#   docker build -t delayed-task-operator:0.1.0 .
# The jar is built outside the image on purpose: Maven's offline cache stays on the host.
FROM eclipse-temurin:17-jre

# A fixed, non-root uid/gid (matches runAsUser in the chart and k8s/ manifests, so the
# "restricted" Pod Security Standard's runAsNonRoot can be verified from the numeric id).
RUN groupadd --system --gid 10001 operator \
 && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin operator

WORKDIR /app
# Owned by root and not writable by the operator user.
COPY target/delayed-task-operator.jar /app/delayed-task-operator.jar

# Container-aware JVM defaults: the heap follows the memory limit, an OutOfMemoryError ends the
# process (Kubernetes restarts it) instead of leaving it half-alive, temp files go to /tmp (an
# emptyDir when the root filesystem is read-only). The chart/manifests may override JDK_JAVA_OPTIONS.
ENV JDK_JAVA_OPTIONS="-XX:MaxRAMPercentage=75.0 -XX:+ExitOnOutOfMemoryError -Djava.io.tmpdir=/tmp"

USER 10001:10001
EXPOSE 8080
ENTRYPOINT ["java", "-jar", "/app/delayed-task-operator.jar"]
