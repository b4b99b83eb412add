package io.github.pgidgen;

import java.time.Instant;

/**
 * The grant-bound Snowflake rule (docs/formats.md §8, the writer's rule; pinned by
 * tests/vectors/grant_traces.json), pure: no I/O, the clock reading given. A state bound to slot
 * S for the window [lo, hi) (ms since epochMs) makes only ids of worker S whose time is in the
 * window, each greater than the one before; {@link #bind} keeps the high-water mark, so ids keep
 * increasing across renewals and new grants. Not thread-safe: its owner locks.
 */
final class SnowflakeGrantState {
    int slot = -1;
    long lo;
    long hi;
    /** Result of the last step: the id, or the clock reading (unix ms) to wait until. */
    long id;
    long waitUntil;
    final long maxWait;
    private final SnowflakeCore core;
    private int workerBits;

    SnowflakeGrantState(long epochMs, long maxWaitMs) {
        this.maxWait = maxWaitMs;
        this.core = new SnowflakeCore(epochMs, maxWaitMs);
    }

    long epochMs() {
        return core.epochMs;
    }

    void setEpoch(long epochMs) {
        core.epochMs = epochMs;
    }

    boolean made() {
        return core.lastMs >= 0;
    }

    /** Milliseconds since the epoch of the last id, -1: none. */
    long lastMs() {
        return core.lastMs;
    }

    void bind(int slot, long lo, long hi) {
        Snowflake.checkWorker(slot);
        if (lo > hi) throw new IllegalArgumentException("a grant's window [" + lo + ", " + hi + ") ends before it starts");
        this.slot = slot;
        this.lo = lo;
        this.hi = hi;
        this.workerBits = slot << 12;
    }

    /** No grant: every step says renew. */
    void unbind() {
        slot = -1;
        lo = 0;
        hi = 0;
        workerBits = 0;
    }

    GrantStep step(long nowMs) {
        long t = nowMs - core.epochMs;
        if (t >= hi) return GrantStep.RENEW;
        if (t < lo) {
            if (lo - t <= maxWait) {
                waitUntil = core.epochMs + lo;
                return GrantStep.WAIT;
            }
            throw new ClockBeforeWindow(RegistryWords.of("clock_before_window", "behind", lo - t,
                    "start", Instant.ofEpochMilli(core.epochMs + lo), "kind", "snowflake", "slot", slot, "max_wait", maxWait));
        }
        if (!core.step(nowMs, workerBits)) {
            if (core.waitUntil - core.epochMs < hi) {
                waitUntil = core.waitUntil;
                return GrantStep.WAIT;
            }
            return GrantStep.RENEW;
        }
        if (core.outMs >= hi) return GrantStep.RENEW;
        core.commit();
        id = core.id();
        return GrantStep.ID;
    }
}
