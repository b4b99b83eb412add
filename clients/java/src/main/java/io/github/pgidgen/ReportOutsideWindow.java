package io.github.pgidgen;

/** SQLSTATE IG006: an edge device reports an id outside its grant's window. */
public class ReportOutsideWindow extends RegistryException {
    private static final long serialVersionUID = 1L;

    public ReportOutsideWindow(String message) {
        super(message, null, null);
    }

    public ReportOutsideWindow(String message, String sqlstate, Throwable cause) {
        super(message, sqlstate, cause);
    }
}
