package io.github.pgidgen;

/** SQLSTATE IG004: the lease asked for is longer than the pool allows for this kind. */
public class LeaseTooLong extends RegistryException {
    private static final long serialVersionUID = 1L;

    public LeaseTooLong(String message) {
        super(message, null, null);
    }

    public LeaseTooLong(String message, String sqlstate, Throwable cause) {
        super(message, sqlstate, cause);
    }
}
