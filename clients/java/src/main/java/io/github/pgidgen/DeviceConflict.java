package io.github.pgidgen;

/**
 * SQLSTATE 23505: one grant is used by two edge devices (a copied device state); an
 * {@link EdgeStore} that got it makes no more ids of that grant (sqlstate null then).
 */
public class DeviceConflict extends RegistryException {
    private static final long serialVersionUID = 1L;

    public DeviceConflict(String message) {
        super(message, null, null);
    }

    public DeviceConflict(String message, String sqlstate, Throwable cause) {
        super(message, sqlstate, cause);
    }
}
