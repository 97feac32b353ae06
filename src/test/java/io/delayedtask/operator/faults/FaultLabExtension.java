package io.delayedtask.operator.faults;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Gives each test that takes a {@link FaultLab} parameter a lab of its own, named after the test
 * (its processes' logs go under that name), and closes it after the test, pass or fail: JUnit
 * closes what a test's store holds when the test ends.
 */
final class FaultLabExtension implements ParameterResolver {
  private static final ExtensionContext.Namespace LABS = ExtensionContext.Namespace.create(FaultLabExtension.class);

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    return parameter.getParameter().getType() == FaultLab.class;
  }

  @Override
  public FaultLab resolveParameter(ParameterContext parameter, ExtensionContext context) {
    String name = context.getRequiredTestClass().getSimpleName() + "-" + context.getRequiredTestMethod().getName();
    return context.getStore(LABS).getOrComputeIfAbsent("lab", key -> FaultLab.start(name), FaultLab.class);
  }
}
