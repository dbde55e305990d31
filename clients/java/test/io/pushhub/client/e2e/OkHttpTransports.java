package io.pushhub.client.e2e;

import io.pushhub.client.Transport;
import io.pushhub.client.okhttp.OkHttpTransport;
import okhttp3.OkHttpClient;

/** The OkHttp transport as an Android app would configure it (in its own class: okhttp.jar is loaded only when used). */
final class OkHttpTransports {
    private OkHttpTransports() {}

    static Transport make(String caPemPath) throws Exception {
        if (caPemPath == null) return new OkHttpTransport();
        OkHttpClient client = new OkHttpClient.Builder()
                .sslSocketFactory(TestCertificates.trusting(caPemPath).getSocketFactory(),
                        TestCertificates.trustManager(caPemPath))
                .build();
        return new OkHttpTransport(client);
    }
}
