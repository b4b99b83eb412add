package io.github.pgidgen;

/**
 * An error of the writer registry or of a generator bound to one of its grants. Each refusal of
 * the registry has its own SQLSTATE and its own subclass ({@link #of}; the table is
 * tests/vectors/registry_errors.json); a code not listed there is a plain RegistryException.
 */
public class RegistryException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final String sqlstate;

    public RegistryException(String message) {
        this(message, null, null);
    }

    public RegistryException(String message, String sqlstate, Throwable cause) {
        super(message, cause);
        this.sqlstate = sqlstate;
    }

    /** The server's SQLSTATE when the server raised it, else null. */
    public String sqlstate() {
        return sqlstate;
    }

    /**
     * The exception of a registry refusal: the class of its SQLSTATE (see the subclasses), the
     * message as given (the server's message, with its DETAIL when there is one).
     */
    public static RegistryException of(String sqlstate, String message, String serverMessage, Throwable cause) {
        if (sqlstate == null) return new RegistryException(message, null, cause);
        switch (sqlstate) {
            case "IG001": return new RegistryFenced(message, sqlstate, cause, RegistryFenced.untilOf(serverMessage));
            case "IG002": return new PoolNotAllowed(message, sqlstate, cause);
            case "IG003": return new CapReached(message, sqlstate, cause);
            case "IG004": return new LeaseTooLong(message, sqlstate, cause);
            case "IG005": return new EpochChanged(message, sqlstate, cause);
            case "IG006": return new ReportOutsideWindow(message, sqlstate, cause);
            case "55000": case "42704": return new GrantLost(message, sqlstate, cause);
            case "42501": return new WrongToken(message, sqlstate, cause);
            case "53400": return new SlotsExhausted(message, sqlstate, cause);
            case "23505": return new DeviceConflict(message, sqlstate, cause);
            default: return new RegistryException(message, sqlstate, cause);
        }
    }
}
