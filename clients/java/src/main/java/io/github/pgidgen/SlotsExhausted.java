package io.github.pgidgen;

/** SQLSTATE 53400: every slot of the pool for this kind is held (the DETAIL says how many and when the first ends). */
public class SlotsExhausted extends RegistryException {
    private static final long serialVersionUID = 1L;

    public SlotsExhausted(String message) {
        super(message, null, null);
    }

    public SlotsExhausted(String message, String sqlstate, Throwable cause) {
        super(message, sqlstate, cause);
    }
}
