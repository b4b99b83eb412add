package io.github.pgidgen;

import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;

/**
 * A Snowflake generator with a worker id you assign (reserve it with idgen_reserve, or the
 * registry may grant it to another writer): the server's rule, ids strictly increasing; a used-up
 * millisecond, or a clock stepped back by up to maxBackwardMs, is waited out. Thread-safe.
 */
public final class SnowflakeGenerator {
    private final SnowflakeCore core;
    private final int workerBits;
    private final LongSupplier clockMs;

    public SnowflakeGenerator(int workerId) {
        this(workerId, Snowflake.DEFAULT_EPOCH_MS, 1000, System::currentTimeMillis);
    }

    public SnowflakeGenerator(int workerId, long epochMs, long maxBackwardMs, LongSupplier clockMs) {
        this.workerBits = Snowflake.checkWorker(workerId) << 12;
        this.core = new SnowflakeCore(epochMs, maxBackwardMs);
        this.clockMs = clockMs;
    }

    public synchronized long nextId() {
        for (;;) {
            long now = clockMs.getAsLong();
            if (core.step(now, workerBits)) {
                core.commit();
                return core.id();
            }
            LockSupport.parkNanos(Math.max(core.waitUntil - now, 0) * 1_000_000L + 50_000L);
        }
    }
}
