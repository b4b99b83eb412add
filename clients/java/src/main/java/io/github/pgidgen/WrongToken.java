package io.github.pgidgen;

/** SQLSTATE 42501: a wrong token, a grant of another role, or a reservation (which has no token). */
public class WrongToken extends RegistryException {
    private static final long serialVersionUID = 1L;

    public WrongToken(String message) {
        super(message, null, null);
    }

    public WrongToken(String message, String sqlstate, Throwable cause) {
        super(message, sqlstate, cause);
    }
}
