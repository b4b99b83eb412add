package io.github.pgidgen;

/** The writer's clock is outside its grant's window and cannot be brought into it. */
public class ClockOutsideWindow extends RegistryException {
    private static final long serialVersionUID = 1L;

    public ClockOutsideWindow(String message) {
        super(message, null, null);
    }

    public ClockOutsideWindow(String message, String sqlstate, Throwable cause) {
        super(message, sqlstate, cause);
    }
}
