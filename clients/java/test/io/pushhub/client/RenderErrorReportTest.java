package io.pushhub.client;

import static io.pushhub.client.Expect.equal;
import static io.pushhub.client.Expect.isTrue;

/** What a render_error says (DESIGN §15): component, message, cuts by code point. */
final class RenderErrorReportTest {
    private RenderErrorReportTest() {}

    static final class Broken extends Exception implements RenderErrorDescribing {
        private static final long serialVersionUID = 1L;

        Broken(String message) { super(message); }

        @Override
        public String component() { return "Carousel"; }
    }

    static void testTheComponentAndMessageOfAnException() {
        RenderErrorReport report = RenderErrorReport.of(new Broken("slide 2 has no image"));
        equal("component", "Carousel", report.component);
        equal("message", "slide 2 has no image", report.message);
        RenderErrorReport plain = RenderErrorReport.of(new NullPointerException());
        equal("no component", null, plain.component);
        equal("the class name without a message", "java.lang.NullPointerException", plain.message);
        equal("the message", "{\"type\":\"render_error\",\"screen\":\"home\",\"version\":3,\"hash\":\"h\",\"component\":\"Carousel\",\"message\":\"slide 2 has no image\"}",
                report.message("home", 3, "h").toString());
    }

    static void testLongTextIsCutByCodePointsNeverInsideAPairAndLoneSurrogatesAreReplaced() {
        String faces = "😀".repeat(1_001);
        String cut = new RenderErrorReport(null, faces).message;
        equal("1000 code points", 1_000, cut.codePointCount(0, cut.length()));
        isTrue("whole pairs", !Character.isHighSurrogate(cut.charAt(cut.length() - 1)));
        equal("a lone surrogate", "a\uFFFDb", new RenderErrorReport(null, "a\uD800b").message);
        equal("component cut to 200", 200, new RenderErrorReport("x".repeat(300), "m").component.length());
    }

    /** An app's error whose component() and getMessage() throw. */
    static final class BrokenTwice extends RuntimeException implements RenderErrorDescribing {
        private static final long serialVersionUID = 1L;

        @Override
        public String component() { throw new IllegalStateException("no component"); }

        @Override
        public String getMessage() { throw new UnsupportedOperationException("no message"); }
    }

    static void testAnErrorWhoseComponentOrMessageThrowsIsStillReported() {
        RenderErrorReport report = RenderErrorReport.of(new BrokenTwice());
        equal("no component", null, report.component);
        equal("the class name", BrokenTwice.class.getName(), report.message);
    }
}
