package io.github.pgidgen;

/** SQLSTATE 23505: one grant is used by two edge devices (a copied device state). */
public class DeviceConflict extends RegistryException {
    private static final long serialVersionUID = 1L;

    public DeviceConflict(String message) {
        super(message, null, null);
    }

    public DeviceConflict(String message, String sqlstate, Throwable cause) {
        super(message, sqlstate, cause);
    }
}
