package io.github.pgidgen;

import java.time.Instant;
import java.util.concurrent.ThreadLocalRandom;

/**
 * An xid12 generator bound to a grant of the writer registry: ids whose machine id is the
 * grant's slot and whose second is inside the grant's window, strictly increasing. Thread-safe.
 */
public final class GrantXid extends GrantGenerator {
    private final XidGrantState state;

    GrantXid(Registry registry, String lease) {
        super(registry, lease, "xid12");
        state = new XidGrantState(XidGenerator.defaultPid(), ThreadLocalRandom.current().nextInt(Xid.MAX_COUNTER + 1),
                registry.options.maxWait.toSeconds());
        took = () -> state.id;
    }

    /** The next id: renews or replaces the grant first when its window has run out. */
    public Xid next() {
        synchronized (this) {
            if (tryFast()) return state.id;
        }
        return make(took);
    }

    private final java.util.function.Supplier<Xid> took;

    @Override
    GrantStep step(long clock) {
        return state.step(clock);
    }

    @Override
    void bindState(Grant g) {
        state.bind(g.slot(), g.lo(), g.hi());
    }

    @Override
    void unbindState() {
        state.unbind();
    }

    @Override
    long clock() {
        return Math.floorDiv(registry.options.clockMs.getAsLong(), 1000);
    }

    @Override
    long waitUntil() {
        return state.waitUntil;
    }

    @Override
    long toMs(long clock) {
        return clock * 1000;
    }

    @Override
    String lastIdTime() {
        return Instant.ofEpochSecond(state.lastTime).toString();
    }
}
