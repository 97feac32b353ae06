package io.delayedtask.operator.testing;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A test class that runs against a real kube-apiserver + etcd ({@link RealKubernetes}). Without the
 * binaries it is skipped with one loud line on a developer machine, and fails in CI (CI=true), so
 * CI never skips it. Build the binaries with {@code tools/build-control-plane.sh}.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@ExtendWith(RealKubernetesCondition.class)
public @interface RequiresRealKubernetes {
  /**
   * The minor release the class needs ({@code "1.30"}, see {@link
   * ControlPlaneBinaries#find(String)}); empty: the newest there is.
   */
  String minor() default "";
}
