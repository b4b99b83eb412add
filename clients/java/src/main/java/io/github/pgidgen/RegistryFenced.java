package io.github.pgidgen;

import java.time.Instant;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * SQLSTATE IG001: after a failover, a point-in-time recovery or a restore, the registry grants
 * nothing of this kind in this pool until a grant that may have been lost must have ended.
 * {@link #until()} is that moment (from the server's message, to the microsecond), or null when
 * the message names none.
 */
public class RegistryFenced extends RegistryException {
    private static final long serialVersionUID = 1L;
    private static final Pattern UNTIL = Pattern.compile(" until (\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{6}Z)$");
    private final Instant until;

    public RegistryFenced(String message, String sqlstate, Throwable cause, Instant until) {
        super(message, sqlstate, cause);
        this.until = until;
    }

    /** The end of the fence, or null. */
    public Instant until() {
        return until;
    }

    /** The moment a fenced registry's message ends with ({@code ... until 2026-12-04T10:35:12.345678Z}), or null. */
    public static Instant untilOf(String message) {
        if (message == null) return null;
        Matcher m = UNTIL.matcher(message);
        if (!m.find()) return null;
        try {
            return Instant.parse(m.group(1));
        } catch (java.time.format.DateTimeParseException e) {
            return null;
        }
    }
}
