package io.pushhub.client;

import static io.pushhub.client.Expect.equal;
import static io.pushhub.client.Expect.isTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Android has no {@code java.net.http}: the core jar must not link it except through
 * {@link JdkWebSocketTransport}, which an Android app never uses (it passes OkHttpTransport).
 * Checked with {@code jdeps} on the built jar, and by loading the core in a class loader that
 * has no {@code java.net.http}. The jar carries its R8/ProGuard rule.
 */
final class AndroidLinkageTest {
    private AndroidLinkageTest() {}

    private static final String JDK_TRANSPORT = "io.pushhub.client.JdkWebSocketTransport";

    static Path jar() {
        return RepoRoot.get().resolve("clients/java/build/pushhub-client.jar");
    }

    static void testOnlyJdkWebSocketTransportLinksJavaNetHttp() throws IOException, InterruptedException {
        Process jdeps = new ProcessBuilder("jdeps", "-verbose:class", "-filter:none", jar().toString()).redirectErrorStream(true).start();
        String out = new String(jdeps.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        equal("jdeps exit status (" + out + ")", 0, jdeps.waitFor());
        Pattern edge = Pattern.compile("^\\s+(\\S+)\\s+->\\s+(\\S+)", Pattern.MULTILINE);
        List<String> offenders = new ArrayList<>();
        int seen = 0;
        for (Matcher m = edge.matcher(out); m.find();) {
            String from = m.group(1);
            String to = m.group(2);
            boolean http = to.startsWith("java.net.http.") || to.startsWith(JDK_TRANSPORT);
            if (http && to.startsWith("java.net.http.")) seen++;
            if (http && !from.startsWith(JDK_TRANSPORT)) offenders.add(from + " -> " + to);
        }
        isTrue("jdeps saw JdkWebSocketTransport use java.net.http", seen > 0);
        equal("classes other than JdkWebSocketTransport linking it or java.net.http", List.of(), offenders);
    }

    /** Loads the core jar's classes itself and has no {@code java.net.http} (like Android). */
    static final class WithoutJavaNetHttp extends ClassLoader {
        private final JarFile jar;

        WithoutJavaNetHttp(JarFile jar) {
            super(ClassLoader.getPlatformClassLoader());
            this.jar = jar;
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            synchronized (getClassLoadingLock(name)) {
                if (name.startsWith("java.net.http.")) throw new ClassNotFoundException(name + " (not on Android)");
                if (!name.startsWith("io.pushhub.client.")) return super.loadClass(name, resolve);
                Class<?> loaded = findLoadedClass(name);
                if (loaded != null) return loaded;
                JarEntry entry = jar.getJarEntry(name.replace('.', '/') + ".class");
                if (entry == null) throw new ClassNotFoundException(name);
                try (InputStream in = jar.getInputStream(entry)) {
                    byte[] bytes = in.readAllBytes();
                    return defineClass(name, bytes, 0, bytes.length);
                } catch (IOException e) {
                    throw new ClassNotFoundException(name, e);
                }
            }
        }
    }

    static void testWithoutJavaNetHttpTheCoreLoadsAndTheDefaultTransportSaysWhatToPass() throws Exception {
        try (JarFile jar = new JarFile(jar().toFile())) {
            WithoutJavaNetHttp loader = new WithoutJavaNetHttp(jar);
            for (JarEntry entry : Collections.list(jar.entries())) {
                String name = entry.getName();
                if (!name.endsWith(".class")) continue;
                String type = name.substring(0, name.length() - ".class".length()).replace('/', '.');
                if (type.startsWith(JDK_TRANSPORT)) continue;
                Class.forName(type, true, loader); // loads, links and initializes
            }
            Class<?> pushHub = Class.forName("io.pushhub.client.PushHub", true, loader);
            Object builder = pushHub.getMethod("options", URI.class).invoke(null, URI.create("wss://hub.example.com/v1/connect"));
            Method build = builder.getClass().getMethod("build");
            InvocationTargetException thrown = Expect.throwsA("no transport given", InvocationTargetException.class,
                    () -> build.invoke(builder));
            isTrue("an IllegalStateException: " + thrown.getCause(), thrown.getCause() instanceof IllegalStateException);
            isTrue("that says to pass OkHttpTransport: " + thrown.getCause().getMessage(),
                    thrown.getCause().getMessage().contains("OkHttpTransport"));
            // With a transport given, the client runs; a failed fetch is described without the JDK transport.
            Class<?> transportType = Class.forName("io.pushhub.client.Transport", true, loader);
            Class<?> connectionType = Class.forName("io.pushhub.client.TransportConnection", true, loader);
            Object connection = Proxy.newProxyInstance(loader, new Class<?>[] {connectionType},
                    (proxy, method, args) -> method.getReturnType() == boolean.class ? Boolean.FALSE : null);
            Object transport = Proxy.newProxyInstance(loader, new Class<?>[] {transportType}, (proxy, method, args) -> {
                if (method.getName().equals("get")) {
                    CompletableFuture<Object> failed = new CompletableFuture<>();
                    failed.completeExceptionally(new IOException("no route to host"));
                    return failed;
                }
                return method.getName().equals("open") ? connection : null;
            });
            builder.getClass().getMethod("transport", transportType).invoke(builder, transport);
            Object hub = pushHub.getConstructor(build.getReturnType()).newInstance(build.invoke(builder));
            CompletableFuture<?> fetch = (CompletableFuture<?>) pushHub.getMethod("fetchScreen", String.class).invoke(hub, "home");
            ExecutionException failed = Expect.throwsA("the fetch fails", ExecutionException.class,
                    () -> fetch.get(5, TimeUnit.SECONDS));
            isTrue("as a network failure: " + failed.getCause(), String.valueOf(failed.getCause()).contains("no route to host"));
            pushHub.getMethod("close").invoke(hub);
        }
    }

    static void testOnTheJvmTheDefaultTransportIsTheJdks() {
        PushHubOptions options = PushHub.options(URI.create("wss://hub.example.com/v1/connect")).build();
        isTrue("a JdkWebSocketTransport: " + options.transport, options.transport instanceof JdkWebSocketTransport);
    }

    static void testTheJarCarriesItsShrinkerRules() throws IOException {
        try (JarFile jar = new JarFile(jar().toFile())) {
            JarEntry rules = jar.getJarEntry("META-INF/proguard/pushhub-client.pro");
            isTrue("META-INF/proguard/pushhub-client.pro in the jar", rules != null);
            ByteArrayOutputStream text = new ByteArrayOutputStream();
            try (InputStream in = jar.getInputStream(rules)) {
                in.transferTo(text);
            }
            isTrue("-dontwarn java.net.http.**", text.toString(StandardCharsets.UTF_8).contains("-dontwarn java.net.http.**"));
        }
    }
}
