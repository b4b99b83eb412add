package io.github.pgidgen;

import java.time.Instant;

/**
 * Snowflake ids: 64-bit, time-ordered, non-negative, the server's layout (docs/formats.md §5):
 * 1 bit 0 | 41 bits ms since the epoch | 10 bits worker | 12 bits sequence. Decoding only; the
 * generators are {@link SnowflakeGenerator} (a worker id you assign) and {@link Registry#snowflake}
 * (a worker id the registry grants).
 */
public final class Snowflake {
    public static final int MAX_WORKER = 1023;
    public static final int MAX_SEQUENCE = 4095;
    public static final long MAX_TIMESTAMP = (1L << 41) - 1;
    /** The server's default pg_idgen.snowflake_epoch: 2010-11-04 01:42:54.657 UTC. */
    public static final long DEFAULT_EPOCH_MS = 1288834974657L;

    private Snowflake() {}

    private static long check(long id) {
        if (id < 0) throw new PgIdgenException("invalid snowflake id " + id + ": snowflake ids are never negative", null);
        return id;
    }

    /** Milliseconds since the epoch (id >> 22). */
    public static long msSinceEpoch(long id) {
        return check(id) >>> 22;
    }

    /** The worker id (SQL snowflake_worker). */
    public static int worker(long id) {
        return (int) (check(id) >>> 12) & MAX_WORKER;
    }

    /** The sequence within the millisecond (SQL snowflake_sequence). */
    public static int sequence(long id) {
        return (int) check(id) & MAX_SEQUENCE;
    }

    /** The id's time in unix milliseconds with this epoch. */
    public static long unixMs(long id, long epochMs) {
        return epochMs + msSinceEpoch(id);
    }

    public static long unixMs(long id) {
        return unixMs(id, DEFAULT_EPOCH_MS);
    }

    /** The id's millisecond (SQL snowflake_time) with this epoch. */
    public static Instant time(long id, long epochMs) {
        return Instant.ofEpochMilli(unixMs(id, epochMs));
    }

    public static Instant time(long id) {
        return time(id, DEFAULT_EPOCH_MS);
    }

    /** An id from its parts. */
    public static long fromParts(long msSinceEpoch, int worker, int sequence) {
        if (msSinceEpoch < 0 || msSinceEpoch > MAX_TIMESTAMP) {
            throw new PgIdgenException("snowflake timestamp " + msSinceEpoch + " is outside 0 .. " + MAX_TIMESTAMP, null);
        }
        checkWorker(worker);
        if (sequence < 0 || sequence > MAX_SEQUENCE) {
            throw new PgIdgenException("snowflake sequence " + sequence + " is outside 0 .. " + MAX_SEQUENCE, null);
        }
        return msSinceEpoch << 22 | (long) worker << 12 | sequence;
    }

    static int checkWorker(int worker) {
        if (worker < 0 || worker > MAX_WORKER) {
            throw new PgIdgenException("snowflake worker id " + worker + " is outside the range 0 .. " + MAX_WORKER, null);
        }
        return worker;
    }
}
