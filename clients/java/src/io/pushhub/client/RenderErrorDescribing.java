package io.pushhub.client;

/**
 * An exception that names the component of the screen tree it failed in, for the
 * {@code render_error} the client sends (DESIGN §15): a release's health counts errors per
 * component. Throw one from a {@link TreeListener}, or pass one to {@link PushHub#renderFailed};
 * any other exception is reported without a component.
 * <pre>
 * final class MissingImage extends Exception implements RenderErrorDescribing {
 *     MissingImage() { super("slide 2 has no image"); }
 *     public String component() { return "Carousel"; }
 * }
 * </pre>
 */
public interface RenderErrorDescribing {
    /** The component that could not be drawn ({@code "Carousel"}), or {@code null}; cut to 200 code points. */
    String component();
}
