package io.delayedtask.operator.testing;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.read.ListAppender;
import java.util.List;
import org.slf4j.LoggerFactory;

/**
 * Every log event of this JVM (an in-process operator's included) from {@link #start} to {@link
 * #close}, with the operator's and the Redis client's loggers at DEBUG meanwhile, so a test can say
 * what is never logged at any level.
 */
public final class LogCapture implements AutoCloseable {
  private static final List<String> DEBUG_LOGGERS =
      List.of("io.delayedtask", "io.lettuce", "okhttp3");

  private final ListAppender<ILoggingEvent> appender = new ListAppender<>();
  private final Logger root;
  private final List<Level> levelsBefore;

  private LogCapture() {
    LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
    appender.setContext(context);
    appender.start();
    root = context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    levelsBefore = DEBUG_LOGGERS.stream().map(name -> context.getLogger(name).getLevel()).toList();
    DEBUG_LOGGERS.forEach(name -> context.getLogger(name).setLevel(Level.DEBUG));
    root.addAppender(appender);
  }

  public static LogCapture start() {
    return new LogCapture();
  }

  /** The events so far. */
  public List<ILoggingEvent> events() {
    synchronized (appender) { // the appender's own lock: doAppend is synchronized on it
      return List.copyOf(appender.list);
    }
  }

  /** Each event as its message and, if any, its stack trace. */
  public List<String> lines() {
    return events().stream()
        .map(
            e ->
                e.getFormattedMessage()
                    + (e.getThrowableProxy() == null
                        ? ""
                        : "\n" + ThrowableProxyUtil.asString(e.getThrowableProxy())))
        .toList();
  }

  /** How many events' messages start with {@code start}. */
  public long count(String start) {
    return events().stream().filter(e -> e.getFormattedMessage().startsWith(start)).count();
  }

  @Override
  public void close() {
    root.detachAppender(appender);
    LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
    for (int i = 0; i < DEBUG_LOGGERS.size(); i++) {
      context.getLogger(DEBUG_LOGGERS.get(i)).setLevel(levelsBefore.get(i));
    }
  }
}
