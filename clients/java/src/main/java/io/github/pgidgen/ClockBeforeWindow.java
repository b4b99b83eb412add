package io.github.pgidgen;

/** The clock is further before the grant's window than the generator waits (an {@link EdgeStore} never waits). */
public class ClockBeforeWindow extends ClockOutsideWindow {
    private static final long serialVersionUID = 1L;

    public ClockBeforeWindow(String message) {
        super(message, null, null);
    }

    public ClockBeforeWindow(String message, String sqlstate, Throwable cause) {
        super(message, sqlstate, cause);
    }
}
