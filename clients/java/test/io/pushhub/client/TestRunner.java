package io.pushhub.client;

import java.io.File;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The Java client's test runner (no JUnit: the library has no dependencies, and neither do its
 * tests). It finds every class whose simple name ends in {@code Test} under the class folders
 * given as arguments, and runs each of its {@code static void test…()} methods; a method passes
 * when it returns, fails when it throws (an {@link Expect} failure or anything else).
 *
 * <pre>
 * java -cp build/pushhub-client.jar:build/test-classes io.pushhub.client.TestRunner build/test-classes [filter]
 * </pre>
 *
 * An optional second argument runs only the tests whose {@code Class.method} name contains it.
 * Exit status: 0 when every test passed, 1 when one failed, 2 when none was found (a build that
 * lost its tests must not pass).
 *
 * Invariant: tests run one at a time, in class then method name order, so output is stable.
 */
public final class TestRunner {
    private TestRunner() {}

    public static void main(String[] args) throws IOException {
        if (args.length < 1) {
            System.err.println("usage: TestRunner CLASS_FOLDER [FILTER]");
            System.exit(2);
        }
        Path root = Paths.get(args[0]);
        String filter = args.length > 1 ? args[1] : "";
        List<Method> tests = new ArrayList<>();
        for (String name : testClassNames(root)) {
            Class<?> type;
            try {
                type = Class.forName(name);
            } catch (ClassNotFoundException e) {
                throw new IllegalStateException("found " + name + " under " + root + " but cannot load it", e);
            }
            for (Method method : type.getDeclaredMethods()) {
                int modifiers = method.getModifiers();
                if (method.getName().startsWith("test") && Modifier.isStatic(modifiers)
                        && method.getParameterCount() == 0
                        && (name + "." + method.getName()).contains(filter)) {
                    tests.add(method);
                }
            }
        }
        tests.sort(Comparator.comparing((Method m) -> m.getDeclaringClass().getName()).thenComparing(Method::getName));
        if (tests.isEmpty()) {
            System.err.println("no tests found under " + root + (filter.isEmpty() ? "" : " matching " + filter));
            System.exit(2);
        }
        int failed = 0;
        long started = System.nanoTime();
        for (Method test : tests) {
            String label = test.getDeclaringClass().getSimpleName() + "." + test.getName();
            try {
                test.setAccessible(true);
                test.invoke(null);
                System.out.println("ok    " + label);
            } catch (InvocationTargetException e) {
                failed++;
                System.out.println("FAIL  " + label);
                Throwable cause = e.getCause();
                System.out.println("      " + cause);
                for (StackTraceElement frame : cause.getStackTrace()) {
                    if (frame.getClassName().startsWith("io.pushhub.")
                            && !frame.getClassName().equals(Expect.class.getName())) {
                        System.out.println("        at " + frame);
                    }
                }
            } catch (IllegalAccessException e) {
                failed++;
                System.out.println("FAIL  " + label + ": cannot call it (" + e + ")");
            }
        }
        long millis = (System.nanoTime() - started) / 1_000_000;
        System.out.printf("%d tests, %d passed, %d failed (%d ms)%n", tests.size(), tests.size() - failed, failed, millis);
        System.exit(failed == 0 ? 0 : 1);
    }

    /** The binary names of the classes named {@code …Test} under {@code root} (nested classes excluded). */
    private static List<String> testClassNames(Path root) throws IOException {
        try (Stream<Path> files = Files.walk(root)) {
            return files.filter(f -> f.getFileName().toString().endsWith("Test.class"))
                    .map(f -> root.relativize(f).toString())
                    .filter(f -> !f.contains("$"))
                    .map(f -> f.substring(0, f.length() - ".class".length()).replace(File.separatorChar, '.'))
                    .sorted()
                    .collect(Collectors.toList());
        }
    }
}
