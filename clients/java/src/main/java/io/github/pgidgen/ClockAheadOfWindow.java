package io.github.pgidgen;

/**
 * The clock is past the end of the window even just after a renewal (more than a lease ahead of
 * the server's); on an {@link EdgeStore}, the clock is at or past its window's end, or the
 * window's ids are used up: sync to renew it.
 */
public class ClockAheadOfWindow extends ClockOutsideWindow {
    private static final long serialVersionUID = 1L;

    public ClockAheadOfWindow(String message) {
        super(message, null, null);
    }

    public ClockAheadOfWindow(String message, String sqlstate, Throwable cause) {
        super(message, sqlstate, cause);
    }
}
