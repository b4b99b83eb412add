package io.github.pgidgen;

/**
 * The server's Snowflake state machine on numbers: an id is (ms, low) with low = worker << 12 |
 * sequence; (lastMs, lastLow) is the high-water mark (lastMs -1: none). {@link #step} gives the
 * next id's (ms, low) in (outMs, outLow) and true, or false with {@link #waitUntil} (unix ms) to
 * wait for; it throws SnowflakeClockException when the clock is more than maxBackwardMs behind
 * the last id. Not thread-safe: its owner locks.
 */
final class SnowflakeCore {
    long lastMs = -1;
    int lastLow;
    long outMs;
    int outLow;
    long waitUntil;
    long epochMs;
    final long maxBackwardMs;

    SnowflakeCore(long epochMs, long maxBackwardMs) {
        this.epochMs = epochMs;
        this.maxBackwardMs = maxBackwardMs;
    }

    boolean step(long nowUnixMs, int workerBits) {
        long ms = nowUnixMs - epochMs;
        if (ms < 0) {
            throw new PgIdgenException("the clock (" + nowUnixMs + " unix ms) is before the snowflake epoch (" + epochMs + " ms)", null);
        }
        if (ms > Snowflake.MAX_TIMESTAMP) throw outOfRange(ms);
        if (lastMs < ms || lastMs == ms && lastLow < workerBits) {
            outMs = ms;
            outLow = workerBits;
            return true;
        }
        if (lastMs == ms && lastLow - workerBits < Snowflake.MAX_SEQUENCE) {
            outMs = ms;
            outLow = lastLow + 1;
            return true;
        }
        int highest = workerBits | Snowflake.MAX_SEQUENCE;
        long targetMs = highest > lastLow ? lastMs : lastMs + 1;
        if (targetMs > Snowflake.MAX_TIMESTAMP) throw outOfRange(targetMs);
        long behind = lastMs > ms ? lastMs - ms : 0;
        if (behind > maxBackwardMs) {
            throw new SnowflakeClockException("the clock moved back " + behind
                    + " ms behind the last snowflake id (at most " + maxBackwardMs + " ms is waited out)");
        }
        waitUntil = epochMs + targetMs;
        return false;
    }

    void commit() {
        lastMs = outMs;
        lastLow = outLow;
    }

    long id() {
        return outMs << 22 | outLow;
    }

    private static PgIdgenException outOfRange(long ms) {
        return new PgIdgenException("snowflake timestamp out of range: " + ms + " ms since the epoch does not fit in 41 bits", null);
    }
}
