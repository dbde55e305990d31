package io.pushhub.client.e2e;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;

/** TLS trust for the end-to-end tests: the test's own CA (a PEM file) and nothing else. */
final class TestCertificates {
    private TestCertificates() {}

    static TrustManagerFactory trustManagers(String pemPath) throws Exception {
        KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
        store.load(null, null);
        try (InputStream in = Files.newInputStream(Paths.get(pemPath))) {
            Certificate certificate = CertificateFactory.getInstance("X.509").generateCertificate(in);
            store.setCertificateEntry("test-ca", certificate);
        }
        TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        factory.init(store);
        return factory;
    }

    static SSLContext trusting(String pemPath) throws Exception {
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, trustManagers(pemPath).getTrustManagers(), null);
        return context;
    }

    static X509TrustManager trustManager(String pemPath) throws Exception {
        return (X509TrustManager) trustManagers(pemPath).getTrustManagers()[0];
    }
}
