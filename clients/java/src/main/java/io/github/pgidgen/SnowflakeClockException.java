package io.github.pgidgen;

/** The clock stepped back behind the last Snowflake id by more than the generator waits out. */
public class SnowflakeClockException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public SnowflakeClockException(String message) {
        super(message);
    }
}
