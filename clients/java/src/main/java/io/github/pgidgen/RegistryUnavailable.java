package io.github.pgidgen;

/** The registry could not be reached (connection refused or lost, or no answer within the Registry's timeout), or at the window's end no renewed window came within renewWait. */
public class RegistryUnavailable extends RegistryException {
    private static final long serialVersionUID = 1L;

    public RegistryUnavailable(String message) {
        super(message, null, null);
    }

    public RegistryUnavailable(String message, String sqlstate, Throwable cause) {
        super(message, sqlstate, cause);
    }
}
