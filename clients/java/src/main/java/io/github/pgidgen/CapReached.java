package io.github.pgidgen;

/** SQLSTATE IG003: the caller's role holds its cap of live grants in this pool. */
public class CapReached extends RegistryException {
    private static final long serialVersionUID = 1L;

    public CapReached(String message) {
        super(message, null, null);
    }

    public CapReached(String message, String sqlstate, Throwable cause) {
        super(message, sqlstate, cause);
    }
}
