package io.github.pgidgen;

/**
 * A value the server would refuse: bad xid12 text or bytes, a bad rapkey, a bad Snowflake id or
 * part. {@link #getMessage()} is the server's message, then ": " and its DETAIL (also in
 * {@link #detail()}), the same words as the server's error.
 */
public class PgIdgenException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;
    private final String primary;
    private final String detail;

    public PgIdgenException(String message, String detail) {
        super(Words.oneLine(message, detail));
        this.primary = message;
        this.detail = detail;
    }

    /** The server's message (MESSAGE_TEXT) without the DETAIL. */
    public String primaryMessage() {
        return primary;
    }

    /** The server's DETAIL, or null. */
    public String detail() {
        return detail;
    }
}
