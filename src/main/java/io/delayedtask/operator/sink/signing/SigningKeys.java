package io.delayedtask.operator.sink.signing;

import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The symmetric signing secrets of one {@code sink.signing.key}, parsed from the Standard Webhooks
 * form ({@code whsec_<base64>}, several separated by whitespace while a secret is rotated), and the
 * headers they sign an attempt with: {@code webhook-id}, {@code webhook-timestamp} (epoch seconds)
 * and {@code webhook-signature} ({@code v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">}, one
 * per secret, space-separated), as standardwebhooks.com's specification says.
 *
 * <p>Neither {@link #toString()} nor any exception from here shows a secret or any part of one.
 */
public final class SigningKeys {
  public static final String ID = "webhook-id";
  public static final String TIMESTAMP = "webhook-timestamp";
  public static final String SIGNATURE = "webhook-signature";

  /** The specification's prefix of a serialized symmetric secret. */
  public static final String PREFIX = "whsec_";

  /** The specification's shortest secret: 24 bytes (192 bits). */
  public static final int MIN_BYTES = 24;

  private static final String HMAC = "HmacSHA256";

  private final List<SecretKeySpec> keys;

  private SigningKeys(List<SecretKeySpec> keys) {
    this.keys = List.copyOf(keys);
  }

  /**
   * The secrets in {@code value} (a Secret's value, decoded to text).
   *
   * @param where how the message names the value's place (the Secret, its namespace and key)
   * @param fix what the message says to do (how to write a good value)
   * @throws SigningSecretException naming {@code where}, which secret of several, what is wrong and
   *     {@code fix}, never the value
   */
  public static SigningKeys parse(String value, String where, String fix) {
    Objects.requireNonNull(value, "value");
    String[] parts = value.strip().split("\\s+");
    if (value.isBlank()) {
      throw new SigningSecretException(where + " is empty; " + fix);
    }
    List<SecretKeySpec> keys = new ArrayList<>(parts.length);
    for (int i = 0; i < parts.length; i++) {
      String which = parts.length == 1 ? "" : " (secret " + (i + 1) + " of " + parts.length + ")";
      String part = parts[i];
      if (!part.startsWith(PREFIX)) {
        throw new SigningSecretException(
            where
                + which
                + " does not start with "
                + PREFIX
                + ": it must be in the "
                + "Standard Webhooks form whsec_<base64>; "
                + fix);
      }
      byte[] secret;
      try {
        secret = Base64.getDecoder().decode(part.substring(PREFIX.length()));
      } catch (IllegalArgumentException e) {
        // The decoder's message quotes the offending character: not shown.
        throw new SigningSecretException(
            where
                + which
                + " is not whsec_ followed by base64 (standard alphabet, "
                + "with padding); "
                + fix);
      }
      if (secret.length < MIN_BYTES) {
        throw new SigningSecretException(
            where
                + which
                + " is "
                + secret.length
                + " bytes long, shorter than the "
                + MIN_BYTES
                + " bytes (192 bits) the Standard Webhooks specification asks for; "
                + fix);
      }
      keys.add(new SecretKeySpec(secret, HMAC));
    }
    return new SigningKeys(keys);
  }

  /** How many secrets sign (more than one while rotating). */
  public int count() {
    return keys.size();
  }

  /**
   * The three headers that sign one attempt.
   *
   * @param id {@code webhook-id}: the same for every attempt of one event (the CloudEvent's id)
   * @param sentAt the attempt's send time; {@code webhook-timestamp} is its epoch second
   * @param body the body exactly as sent
   */
  public Map<String, String> headers(String id, Instant sentAt, byte[] body) {
    String timestamp = Long.toString(sentAt.getEpochSecond());
    Map<String, String> headers = new LinkedHashMap<>();
    headers.put(ID, id);
    headers.put(TIMESTAMP, timestamp);
    headers.put(SIGNATURE, signature(id, timestamp, body));
    return headers;
  }

  /**
   * {@code webhook-signature}: {@code v1,<base64>} per secret, space-separated, in the order
   * written.
   */
  String signature(String id, String timestamp, byte[] body) {
    byte[] prefix = (id + "." + timestamp + ".").getBytes(StandardCharsets.UTF_8);
    StringBuilder header = new StringBuilder();
    for (SecretKeySpec key : keys) {
      Mac mac = mac(key);
      mac.update(prefix);
      mac.update(body);
      if (header.length() > 0) {
        header.append(' ');
      }
      header.append("v1,").append(Base64.getEncoder().encodeToString(mac.doFinal()));
    }
    return header.toString();
  }

  private static Mac mac(SecretKeySpec key) {
    try {
      Mac mac = Mac.getInstance(HMAC);
      mac.init(key);
      return mac;
    } catch (NoSuchAlgorithmException | InvalidKeyException e) {
      // Every Java platform has HmacSHA256, and any non-empty key suits it.
      throw new IllegalStateException("HmacSHA256 is unavailable", e);
    }
  }

  @Override
  public String toString() {
    return "SigningKeys[" + keys.size() + " secret(s), hidden]";
  }
}
