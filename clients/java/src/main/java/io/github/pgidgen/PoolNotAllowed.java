package io.github.pgidgen;

/** SQLSTATE IG002: the caller's role may not take grants in this pool (idgen_pool_allow). */
public class PoolNotAllowed extends RegistryException {
    private static final long serialVersionUID = 1L;

    public PoolNotAllowed(String message) {
        super(message, null, null);
    }

    public PoolNotAllowed(String message, String sqlstate, Throwable cause) {
        super(message, sqlstate, cause);
    }
}
