package io.delayedtask.operator.testing;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A test (class or method) whose Jobs must really run: a real kube-apiserver + etcd and, for {@link
 * KwokCluster}, kube-controller-manager, kube-scheduler, kwok and kwok's stage files. Like {@link
 * RequiresRealKubernetes}: without them it is skipped with one loud line on a developer machine,
 * and fails in CI (CI=true).
 */
@Target({ElementType.TYPE, ElementType.METHOD})
@Retention(RetentionPolicy.RUNTIME)
@ExtendWith(KwokCondition.class)
public @interface RequiresKwok {}
