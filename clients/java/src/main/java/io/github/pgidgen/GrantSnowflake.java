package io.github.pgidgen;

import java.time.Instant;

/**
 * A Snowflake generator bound to a grant of the writer registry: ids whose worker id is the
 * grant's slot and whose time is inside the grant's window, strictly increasing across renewals
 * and new grants. Thread-safe.
 */
public final class GrantSnowflake extends GrantGenerator {
    private final SnowflakeGrantState state;

    GrantSnowflake(Registry registry, String lease) {
        super(registry, lease, "snowflake");
        state = new SnowflakeGrantState(Snowflake.DEFAULT_EPOCH_MS, registry.options.maxWait.toMillis());
        took = () -> state.id;
    }

    /** The next id: renews or replaces the grant first when its window has run out. */
    public long nextId() {
        synchronized (this) {
            if (tryFast()) return state.id;
        }
        return make(took);
    }

    private final java.util.function.Supplier<Long> took;

    /** The epoch of the grant's ids (unix ms). */
    public synchronized long epochMs() {
        return state.epochMs();
    }

    /** An id's time with the grant's epoch. */
    public Instant time(long id) {
        return Snowflake.time(id, epochMs());
    }

    @Override
    GrantStep step(long clock) {
        return state.step(clock);
    }

    @Override
    void bindState(Grant g) {
        state.setEpoch(g.epochMs());
        state.bind(g.slot(), g.lo(), g.hi());
    }

    @Override
    void unbindState() {
        state.unbind();
    }

    @Override
    long clock() {
        return registry.options.clockMs.getAsLong();
    }

    @Override
    long waitUntil() {
        return state.waitUntil;
    }

    @Override
    long toMs(long clock) {
        return clock;
    }

    @Override
    String lastIdTime() {
        return Instant.ofEpochMilli(state.epochMs() + state.lastMs()).toString();
    }
}
