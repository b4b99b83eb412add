package io.github.pgidgen;

/** A key, body, part or prefix the server would reject, in the server's words. */
public final class RapkeyException extends PgIdgenException {
    private static final long serialVersionUID = 1L;
    private final boolean checksum;
    private final char expected;

    RapkeyException(String message, String detail, boolean checksum, char expected) {
        super(message, detail);
        this.checksum = checksum;
        this.expected = expected;
    }

    /** True when only the check character is wrong (then {@link #expected()} is the right one). */
    public boolean checksum() {
        return checksum;
    }

    public char expected() {
        return expected;
    }
}
