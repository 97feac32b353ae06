package io.delayedtask.operator.sink.signing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Base64;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The signer against the Standard Webhooks specification's published test vector (the one every
 * library of github.com/standard-webhooks/standard-webhooks signs in its tests), and the secret's
 * bad forms: each refused with a message naming where and the fix, never any part of the value.
 */
class SigningKeysTest {
  private static final String WHERE =
      "key k of Secret delayedtask-signing in namespace shop (sink.signing.key)";
  private static final String FIX = "write a Standard Webhooks secret there";

  @Test
  void signsTheSpecificationsTestVector() {
    // libraries/{go,javascript,python,php,java,csharp} tests: TestWebhookSign and its siblings.
    SigningKeys keys = SigningKeys.parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", WHERE, FIX);
    var headers =
        keys.headers(
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            Instant.ofEpochSecond(1614265330),
            "{\"test\": 2432232314}".getBytes(StandardCharsets.UTF_8));
    assertThat(headers)
        .containsExactly(
            java.util.Map.entry("webhook-id", "msg_p5jXN8AQM9LWM0D4loKWxJek"),
            java.util.Map.entry("webhook-timestamp", "1614265330"),
            java.util.Map.entry(
                "webhook-signature", "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="));
  }

  @Test
  void severalSecretsSignEachInTheOrderWritten() {
    String other = "whsec_" + Base64.getEncoder().encodeToString(new byte[32]);
    SigningKeys keys =
        SigningKeys.parse("  " + other + "\twhsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n", WHERE, FIX);
    assertThat(keys.count()).isEqualTo(2);
    String signature =
        keys.headers(
                "msg_p5jXN8AQM9LWM0D4loKWxJek",
                Instant.ofEpochSecond(1614265330),
                "{\"test\": 2432232314}".getBytes(StandardCharsets.UTF_8))
            .get("webhook-signature");
    assertThat(signature.split(" "))
        .hasSize(2)
        .endsWith("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
  }

  @Test
  void aSubSecondSendTimeIsItsEpochSecond() {
    SigningKeys keys = SigningKeys.parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", WHERE, FIX);
    assertThat(keys.headers("id", Instant.ofEpochSecond(1614265330, 999_999_999), new byte[0]))
        .containsEntry("webhook-timestamp", "1614265330");
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", // no prefix
        "whsk_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", // the asymmetric prefix
        "whsec_MfKQ9r8GKYqr*wjUPD8ILPZIo2LaLaSw", // not base64
        "whsec_c2hvcnRzZWNyZXQ=", // 11 bytes
        "whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==", // 22 bytes
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw whsec_c2hvcnRzZWNyZXQ=", // the second too short
        "",
        "   "
      })
  void aBadValueIsRefusedNamingWhereAndTheFixNeverTheValue(String value) {
    assertThatThrownBy(() -> SigningKeys.parse(value, WHERE, FIX))
        .isInstanceOf(SigningSecretException.class)
        .hasMessageStartingWith(WHERE)
        .hasMessageEndingWith(FIX)
        .satisfies(
            e -> {
              for (String part : value.split("[\\s_]+")) {
                if (part.length() > 4 && !part.equals("whsec") && !part.equals("whsk")) {
                  assertThat(e.getMessage()).doesNotContain(part);
                }
              }
              assertThat(e.getStackTrace()).isEmpty();
              assertThat(e.getCause()).isNull();
            });
  }

  @Test
  void theMessagesSayWhatIsWrong() {
    assertThatThrownBy(() -> SigningKeys.parse("whsec_c2hvcnRzZWNyZXQ=", WHERE, FIX))
        .hasMessageContaining("11 bytes long, shorter than the 24 bytes");
    assertThatThrownBy(
            () -> SigningKeys.parse("whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA whsk_x", WHERE, FIX))
        .hasMessageContaining("(secret 2 of 2) does not start with whsec_");
    assertThatThrownBy(() -> SigningKeys.parse("whsec_!!", WHERE, FIX))
        .hasMessageContaining("is not whsec_ followed by base64");
    assertThatThrownBy(() -> SigningKeys.parse("", WHERE, FIX)).hasMessageContaining("is empty");
  }

  @Test
  void exactly24BytesIsEnough() {
    assertThat(
            SigningKeys.parse(
                    "whsec_" + Base64.getEncoder().encodeToString(new byte[24]), WHERE, FIX)
                .count())
        .isEqualTo(1);
  }

  @Test
  void itsTextNeverShowsASecret() {
    SigningKeys keys = SigningKeys.parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", WHERE, FIX);
    assertThat(keys.toString())
        .doesNotContain("MfKQ")
        .isEqualTo("SigningKeys[1 secret(s), hidden]");
  }
}
