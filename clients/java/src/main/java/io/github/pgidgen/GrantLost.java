package io.github.pgidgen;

/** SQLSTATE 55000 (grant lost) or 42704 (no such grant): the grant cannot be renewed; the generator acquires a new one. */
public class GrantLost extends RegistryException {
    private static final long serialVersionUID = 1L;

    public GrantLost(String message) {
        super(message, null, null);
    }

    public GrantLost(String message, String sqlstate, Throwable cause) {
        super(message, sqlstate, cause);
    }
}
