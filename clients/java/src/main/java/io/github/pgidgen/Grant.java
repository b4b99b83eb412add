package io.github.pgidgen;

/**
 * One grant as the registry returned it (docs/formats.md §8). lo and hi are the window in the
 * kind's id-time (Snowflake: ms since epochMs; xid12: unix seconds); serverUs is the server's
 * clock when it answered (unix µs), sentNanos this writer's System.nanoTime() when the statement
 * was sent (the server read its clock after it), wallMs this writer's clock at the answer.
 */
public record Grant(long grantId, long token, String kind, int slot, long lo, long hi, Long epochMs,
        long serverUs, long sentNanos, long rttNanos, long wallMs) {

    /** The window's end as unix µs. */
    public long hiUs() {
        return toUs(hi);
    }

    public long loUs() {
        return toUs(lo);
    }

    long toUs(long t) {
        return epochMs != null ? (epochMs + t) * 1000 : t * 1_000_000;
    }

    /** What was left of the window when the server answered, in ns. */
    long leftNanos() {
        return (hiUs() - serverUs) * 1000;
    }

    Grant withWindow(long lo, long hi) {
        return new Grant(grantId, token, kind, slot, lo, hi, epochMs, serverUs, sentNanos, rttNanos, wallMs);
    }

    /** This writer's clock minus the server's at the answer (half the round trip taken off), in seconds. */
    double offsetSeconds() {
        return (wallMs * 1000.0 - serverUs - rttNanos / 2000.0) / 1e6;
    }
}
