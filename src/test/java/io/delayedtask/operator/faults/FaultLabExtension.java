package io.delayedtask.operator.faults;

import io.delayedtask.operator.testing.RequiresRealKubernetes;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Gives each test that takes a {@link FaultLab} parameter a lab of its own, named after the test
 * (its processes' logs go under that name), and closes it after the test, pass or fail: JUnit
 * closes what a test's store holds when the test ends. A test class marked {@link
 * RequiresRealKubernetes} gets a lab on the real API server; any other class (one that injects API
 * faults) a lab on the mock.
 */
final class FaultLabExtension implements ParameterResolver {
  private static final ExtensionContext.Namespace LABS =
      ExtensionContext.Namespace.create(FaultLabExtension.class);

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    return parameter.getParameter().getType() == FaultLab.class;
  }

  @Override
  public FaultLab resolveParameter(ParameterContext parameter, ExtensionContext context) {
    Class<?> testClass = context.getRequiredTestClass();
    String name = testClass.getSimpleName() + "-" + context.getRequiredTestMethod().getName();
    boolean real = testClass.isAnnotationPresent(RequiresRealKubernetes.class);
    return context
        .getStore(LABS)
        .getOrComputeIfAbsent("lab", key -> FaultLab.start(name, real), FaultLab.class);
  }
}
