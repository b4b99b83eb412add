package io.github.pgidgen;

/** SQLSTATE IG005: pg_idgen.snowflake_epoch differs from the epoch of the registry's Snowflake grants. */
public class EpochChanged extends RegistryException {
    private static final long serialVersionUID = 1L;

    public EpochChanged(String message) {
        super(message, null, null);
    }

    public EpochChanged(String message, String sqlstate, Throwable cause) {
        super(message, sqlstate, cause);
    }
}
