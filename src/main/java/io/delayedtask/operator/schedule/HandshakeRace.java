package io.delayedtask.operator.schedule;

import java.util.function.Supplier;

/**
 * Opens a Lettuce connection again when its handshake failed in a way that hides the server's
 * answer.
 *
 * <p>When Redis refuses the handshake (a wrong password: {@code WRONGPASS}), Lettuce closes the
 * channel and only then fails the handshake with Redis's error; the channel going inactive races
 * that and, about once in 60 connects on a busy machine, wins, so the caller sees "Connection
 * closed prematurely" (or "RedisHandshakeHandler not registered") instead of {@code WRONGPASS}. An
 * operator would then say "Redis is unavailable" where it should say "check the password". Opening
 * again at once gives Redis's real answer; a server that truly closes every connection costs a few
 * more connects and then gets the same message as before.
 */
final class HandshakeRace {
  /**
   * Enough that the race hides the answer on every attempt less than once in ten million connects.
   */
  static final int ATTEMPTS = 5;

  private HandshakeRace() {}

  static <C> C connect(Supplier<C> opener) {
    RuntimeException last = null;
    for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
      try {
        return opener.get();
      } catch (RuntimeException e) {
        if (!hidesTheServersAnswer(e)) {
          throw e;
        }
        last = e;
      }
    }
    throw last;
  }

  static boolean hidesTheServersAnswer(Throwable error) {
    for (Throwable t = error; t != null; t = t.getCause()) {
      String message = t.getMessage();
      if (message != null
          && (message.contains("Connection closed prematurely")
              || message.contains("RedisHandshakeHandler not registered"))) {
        return true;
      }
    }
    return false;
  }
}
