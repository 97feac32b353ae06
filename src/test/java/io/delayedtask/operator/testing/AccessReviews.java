package io.delayedtask.operator.testing;

import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectAccessReviewBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;

/** What an identity may do, asked as {@code kubectl auth can-i} asks: a SelfSubjectAccessReview. */
public final class AccessReviews {
  private AccessReviews() {}

  /**
   * Whether {@code identity} (its own client) may {@code verb} the resource; null namespace or
   * name: any.
   */
  public static boolean can(
      KubernetesClient identity,
      String verb,
      String group,
      String resource,
      String namespace,
      String name) {
    SelfSubjectAccessReview review =
        new SelfSubjectAccessReviewBuilder()
            .withNewSpec()
            .withNewResourceAttributes()
            .withVerb(verb)
            .withGroup(group)
            .withResource(resource)
            .withNamespace(namespace)
            .withName(name)
            .endResourceAttributes()
            .endSpec()
            .build();
    return identity.resource(review).create().getStatus().getAllowed();
  }
}
