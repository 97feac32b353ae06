package io.delayedtask.operator.sink;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;

/**
 * TLS that trusts the JVM's certificate authorities plus a task's {@code sink.caCerts} (PEM). Built
 * once per distinct PEM text and kept (a few hundred at most, least recently used first out): the
 * same factory object lets OkHttp reuse pooled connections to that destination.
 */
final class TrustedCerts {
  private static final int KEPT = 256;

  /** The socket factory and the trust manager OkHttp needs alongside it. */
  record Tls(SSLSocketFactory socketFactory, X509TrustManager trustManager) {}

  private final Map<String, Tls> byPem =
      new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Tls> eldest) {
          return size() > KEPT;
        }
      };

  /**
   * The TLS settings for {@code pem}.
   *
   * @throws IllegalArgumentException when {@code pem} holds no X.509 certificate
   */
  synchronized Tls forPem(String pem) {
    Tls tls = byPem.get(pem);
    if (tls == null) {
      tls = build(pem);
      byPem.put(pem, tls);
    }
    return tls;
  }

  private static Tls build(String pem) {
    try {
      KeyStore trusted = KeyStore.getInstance(KeyStore.getDefaultType());
      trusted.load(null, null);
      int index = 0;
      for (X509Certificate jvmCa : jvmTrustManager().getAcceptedIssuers()) {
        trusted.setCertificateEntry("jvm-" + index++, jvmCa);
      }
      Collection<? extends Certificate> extra =
          CertificateFactory.getInstance("X.509")
              .generateCertificates(
                  new ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII)));
      if (extra.isEmpty()) {
        throw new IllegalArgumentException("sink.caCerts holds no PEM certificate");
      }
      for (Certificate certificate : extra) {
        trusted.setCertificateEntry("sink-" + index++, certificate);
      }
      TrustManagerFactory factory =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      factory.init(trusted);
      X509TrustManager trustManager = x509(factory.getTrustManagers());
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(null, new TrustManager[] {trustManager}, null);
      return new Tls(context.getSocketFactory(), trustManager);
    } catch (GeneralSecurityException | java.io.IOException e) {
      throw new IllegalArgumentException("sink.caCerts is not valid PEM: " + e.getMessage(), e);
    }
  }

  private static X509TrustManager jvmTrustManager() throws GeneralSecurityException {
    TrustManagerFactory factory =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    factory.init((KeyStore) null);
    return x509(factory.getTrustManagers());
  }

  private static X509TrustManager x509(TrustManager[] managers) {
    for (TrustManager manager : managers) {
      if (manager instanceof X509TrustManager x509) {
        return x509;
      }
    }
    throw new IllegalStateException("the JVM offers no X.509 trust manager");
  }
}
