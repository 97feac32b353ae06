package io.delayedtask.operator.config;

/** A bad configuration value: the message names the variable and what it accepts. */
public final class ConfigException extends RuntimeException {
  public ConfigException(String message) {
    super(message);
  }

  public ConfigException(String message, Throwable cause) {
    super(message, cause);
  }
}
