package io.delayedtask.operator.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.PodSecurityContext;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.SecurityContext;
import io.fabric8.kubernetes.api.model.VolumeMount;

/**
 * The "restricted" Pod Security Standard
 * (https://kubernetes.io/docs/concepts/security/pod-security-standards/) plus a read-only root
 * filesystem, checked on a pod spec the way Pod Security Admission would.
 */
final class RestrictedPodSecurity {

  private RestrictedPodSecurity() {}

  static void assertRestricted(PodSpec pod, String what) {
    PodSecurityContext podContext = pod.getSecurityContext();
    assertThat(podContext).as("%s pod securityContext", what).isNotNull();
    assertThat(podContext.getRunAsNonRoot()).as("%s runAsNonRoot", what).isTrue();
    assertThat(podContext.getRunAsUser()).as("%s runAsUser", what).isNotNull().isPositive();
    assertThat(podContext.getSeccompProfile().getType())
        .as("%s pod seccompProfile", what)
        .isEqualTo("RuntimeDefault");
    assertThat(pod.getHostNetwork()).as("%s hostNetwork", what).isNotEqualTo(Boolean.TRUE);
    assertThat(pod.getHostPID()).as("%s hostPID", what).isNotEqualTo(Boolean.TRUE);
    assertThat(pod.getHostIPC()).as("%s hostIPC", what).isNotEqualTo(Boolean.TRUE);
    assertThat(pod.getVolumes())
        .as("%s volumes", what)
        .allSatisfy(v -> assertThat(v.getHostPath()).isNull());
    assertThat(pod.getContainers()).as("%s containers", what).isNotEmpty();
    for (Container container : pod.getContainers()) {
      String where = what + " container " + container.getName();
      SecurityContext context = container.getSecurityContext();
      assertThat(context).as("%s securityContext", where).isNotNull();
      assertThat(context.getAllowPrivilegeEscalation())
          .as("%s allowPrivilegeEscalation", where)
          .isFalse();
      assertThat(context.getPrivileged()).as("%s privileged", where).isNotEqualTo(Boolean.TRUE);
      assertThat(context.getCapabilities().getDrop())
          .as("%s capabilities.drop", where)
          .containsExactly("ALL");
      assertThat(context.getCapabilities().getAdd())
          .as("%s capabilities.add", where)
          .isNullOrEmpty();
      assertThat(context.getReadOnlyRootFilesystem())
          .as("%s readOnlyRootFilesystem", where)
          .isTrue();
      assertThat(context.getRunAsNonRoot())
          .as("%s runAsNonRoot", where)
          .isNotEqualTo(Boolean.FALSE);
      if (context.getRunAsUser() != null) {
        assertThat(context.getRunAsUser()).as("%s runAsUser", where).isPositive();
      }
      assertThat(context.getSeccompProfile().getType())
          .as("%s seccompProfile", where)
          .isEqualTo("RuntimeDefault");
      assertThat(container.getPorts())
          .as("%s hostPort", where)
          .allSatisfy(p -> assertThat(p.getHostPort()).isNull());
      assertThat(container.getResources().getRequests())
          .as("%s requests", where)
          .containsKeys("cpu", "memory");
      assertThat(container.getResources().getLimits()).as("%s limits", where).containsKey("memory");
    }
  }

  /** With a read-only root filesystem the JVM still needs a writable /tmp: an emptyDir. */
  static void assertWritableTmp(PodSpec pod, String what) {
    Container container = pod.getContainers().get(0);
    VolumeMount tmp =
        container.getVolumeMounts().stream()
            .filter(m -> m.getMountPath().equals("/tmp"))
            .findFirst()
            .orElse(null);
    assertThat(tmp).as("%s mounts a volume at /tmp", what).isNotNull();
    assertThat(pod.getVolumes())
        .as("%s /tmp volume is an emptyDir", what)
        .anySatisfy(
            v -> {
              assertThat(v.getName()).isEqualTo(tmp.getName());
              assertThat(v.getEmptyDir()).isNotNull();
            });
  }
}
