package io.pushhub.client;

/**
 * The transport of a client whose options name none: {@link JdkWebSocketTransport} on the JVM,
 * made by reflection so that no other class of the core links it (or {@code java.net.http}
 * through it). On Android, which has no {@code java.net.http}, there is no default: the app
 * passes {@code OkHttpTransport} (pushhub-client-okhttp.jar), and is told so.
 */
final class DefaultTransport {
    private DefaultTransport() {}

    private static final String JDK_TRANSPORT = "io.pushhub.client.JdkWebSocketTransport";
    private static final String ADVICE = "pass one with .transport(new OkHttpTransport(okHttpClient)) "
            + "(io.pushhub.client.okhttp, pushhub-client-okhttp.jar)";

    /** @throws IllegalStateException on Android, or wherever {@code java.net.http} is missing */
    static Transport create() {
        if (isAndroid()) {
            throw new IllegalStateException(
                    "PushHub on Android has no default transport (Android has no java.net.http): " + ADVICE);
        }
        try {
            Class.forName("java.net.http.WebSocket", false, DefaultTransport.class.getClassLoader());
            return (Transport) Class.forName(JDK_TRANSPORT).getDeclaredConstructor().newInstance();
        } catch (ReflectiveOperationException | LinkageError missing) {
            throw new IllegalStateException("PushHub has no default transport here (java.net.http or "
                    + "JdkWebSocketTransport is missing: " + missing + "): " + ADVICE, missing);
        }
    }

    private static boolean isAndroid() {
        String vm = System.getProperty("java.vm.name", "");
        String vendor = System.getProperty("java.vendor", "");
        return vm.contains("Dalvik") || vendor.contains("Android");
    }
}
