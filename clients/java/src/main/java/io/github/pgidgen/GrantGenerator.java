package io.github.pgidgen;

import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * What the two grant-bound generators share: the grant, its background renewal, the waits and
 * errors of the writer's rule (docs/formats.md §8). Ids are made under the generator's monitor;
 * grant operations (acquire, renew, release) one at a time under {@code ops}, never holding the
 * monitor over the network.
 */
abstract class GrantGenerator implements AutoCloseable {
    final Registry registry;
    final String lease;
    final String kind;
    private final ReentrantLock ops = new ReentrantLock();
    private Grant current; // guarded by this
    private boolean madeUnderGrant; // guarded by this
    private ScheduledFuture<?> timer; // guarded by this
    private CompletableFuture<Void> refreshing; // guarded by this

    GrantGenerator(Registry registry, String lease, String kind) {
        this.registry = registry;
        this.lease = lease;
        this.kind = kind;
    }

    /** The state machine's step, under the monitor. */
    abstract GrantStep step(long clock);

    abstract void bindState(Grant g);

    abstract void unbindState();

    /** The clock in the kind's unit (unix ms, or unix seconds). */
    abstract long clock();

    abstract long waitUntil();

    abstract long toMs(long clock);

    /** The last id's time as timestamptz text, for release. */
    abstract String lastIdTime();

    /** The grant in use (null before the first, after release or close). */
    public synchronized Grant grant() {
        return current;
    }

    void start() {
        ops.lock();
        try {
            bind(registry.acquire(kind, lease), false);
        } finally {
            ops.unlock();
        }
    }

    private void bind(Grant g, boolean renewal) {
        synchronized (this) {
            Grant old = current;
            if (renewal && old != null) {
                g = g.withWindow(old.lo(), Math.max(old.hi(), g.hi()));
            } else {
                madeUnderGrant = false;
            }
            current = g;
            bindState(g);
        }
        // Half of what was left of the window when the server answered, counted from when the
        // statement was sent (the server read its clock after that).
        schedule(Math.max(g.sentNanos() + g.leftNanos() / 2 - System.nanoTime(), 50_000_000L));
    }

    private synchronized void schedule(long delayNanos) {
        if (timer != null) timer.cancel(false);
        timer = null;
        if (registry.isClosed()) return;
        try {
            timer = registry.timers.schedule(this::backgroundRenew, delayNanos, TimeUnit.NANOSECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // closing
        }
    }

    private synchronized void drop() {
        current = null;
        unbindState();
        if (timer != null) timer.cancel(false);
        timer = null;
    }

    void stop() {
        drop();
    }

    /** Renews the grant; when it was lost, acquires a new one (never keeps the old). */
    private void renewOrReplace() {
        ops.lock();
        try {
            Grant g = grant();
            if (g == null) {
                bind(registry.acquire(kind, lease), false);
                return;
            }
            try {
                bind(registry.renew(g, lease), true);
            } catch (GrantLost e) {
                drop();
                bind(registry.acquire(kind, lease), false);
            }
        } finally {
            ops.unlock();
        }
    }

    /** The renewal in flight, else a new one run on the registry's thread (inline: on this thread). */
    private CompletableFuture<Void> refresh(boolean inline) {
        CompletableFuture<Void> f;
        boolean mine = false;
        synchronized (this) {
            if (refreshing == null) {
                refreshing = new CompletableFuture<>();
                mine = true;
            }
            f = refreshing;
        }
        if (mine) {
            CompletableFuture<Void> ff = f;
            Runnable run = () -> {
                try {
                    renewOrReplace();
                    ff.complete(null);
                } catch (Throwable t) {
                    ff.completeExceptionally(t);
                } finally {
                    synchronized (this) {
                        if (refreshing == ff) refreshing = null;
                    }
                }
            };
            if (inline) run.run();
            else registry.timers.execute(run);
        }
        return f;
    }

    private void backgroundRenew() {
        if (registry.isClosed()) return;
        Grant g = grant();
        try {
            refresh(true).join();
        } catch (RuntimeException e) {
            if (registry.isClosed() || g == null || grant() != g) return; // no grant: the next id asks
            // unreachable or refused for now: try again soon; the window holds until its end
            schedule(Math.min(Math.max(g.leftNanos() / 8, 50_000_000L), 5_000_000_000L));
        }
    }

    /** The words of an id call that waited for its renewal (or a new grant) in vain: without a grant, or at its window's end. */
    private String unrenewed(Grant g, String window, String noGrant, Object... values) {
        Object[] all = java.util.Arrays.copyOf(values, values.length + 2);
        if (g == null) return RegistryWords.of(noGrant, values);
        all[values.length] = "hi";
        all[values.length + 1] = Instant.ofEpochMilli(g.hiUs() / 1000);
        return RegistryWords.of(window, all);
    }

    /** At the window's end or without a grant: the renewal, waited for at most renewWait. */
    private void awaitWindow() {
        Grant g = grant();
        long wait = registry.options.renewWait.toNanos();
        try {
            refresh(false).get(wait, TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            throw new RegistryUnavailable(unrenewed(g, "window_unrenewed", "grant_unacquired",
                    "renew_wait", registry.options.renewWait.toMillis()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RegistryUnavailable(unrenewed(g, "window_unreachable", "grant_unreachable", "cause", "interrupted"), null, e);
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof RegistryUnavailable) {
                throw new RegistryUnavailable(unrenewed(g, "window_unreachable", "grant_unreachable", "cause", c.getMessage()), null, c);
            }
            if (c instanceof RuntimeException) throw (RuntimeException) c;
            if (c instanceof Error) throw (Error) c;
            throw new RegistryException(c.toString(), null, c);
        }
    }

    /** The fast path, under the monitor: true when the state machine made an id at once. */
    final boolean tryFast() {
        if (current == null || registry.isClosed()) return false;
        try {
            if (step(clock()) != GrantStep.ID) return false;
        } catch (RuntimeException e) {
            return false; // the slow path says it again, with offsets
        }
        madeUnderGrant = true;
        return true;
    }

    /** The slow path: waits, renewals, new grants, errors; took() reads the id under the monitor. */
    final <T> T make(java.util.function.Supplier<T> took) {
        boolean tried = false;
        long deadline = System.nanoTime() + registry.options.maxWait.toNanos() + 1_000_000_000L;
        for (;;) {
            registry.checkOpen();
            GrantStep s;
            long now;
            long until;
            Grant g;
            synchronized (this) {
                now = clock();
                g = current;
                try {
                    s = step(now);
                } catch (ClockBeforeWindow e) {
                    if (g == null) throw e;
                    double offsetMs = g.offsetSeconds() * 1000;
                    throw new ClockBeforeWindow(offsetMs <= 0
                            ? RegistryWords.of("clock_behind_server", "behind", -offsetMs, "inner", e.getMessage())
                            : RegistryWords.of("clock_ahead_window_later", "ahead", offsetMs, "inner", e.getMessage()));
                }
                if (s == GrantStep.ID) {
                    madeUnderGrant = true;
                    return took.get();
                }
                until = waitUntil();
            }
            if (s == GrantStep.WAIT) {
                if (System.nanoTime() > deadline) {
                    throw new ClockBeforeWindow(RegistryWords.of("clock_never_reached", "max_wait", registry.options.maxWait.toMillis(),
                            "now", Instant.ofEpochMilli(toMs(now)), "start", Instant.ofEpochMilli(g == null ? 0 : g.loUs() / 1000)));
                }
                LockSupport.parkNanos(Math.max(toMs(until) - toMs(now), 1) * 1_000_000L);
                continue;
            }
            if (tried) {
                if (g != null) {
                    long nowMs = toMs(now);
                    throw new ClockAheadOfWindow(RegistryWords.of("clock_ahead_of_window", "ahead", g.offsetSeconds() * 1000,
                            "now", Instant.ofEpochMilli(nowMs), "past", nowMs - g.hiUs() / 1000.0,
                            "hi", Instant.ofEpochMilli(g.hiUs() / 1000), "lease", g.leftNanos() / 1e6));
                }
                throw new RegistryUnavailable(RegistryWords.of("grant_lost_again"));
            }
            tried = true;
            awaitWindow();
        }
    }

    /** Releases this generator's grant now, with the time of the last id made under it; the next id acquires a new grant. */
    public void release() {
        releaseNow();
    }

    void releaseNow() {
        ops.lock();
        try {
            Grant g;
            String last;
            synchronized (this) {
                g = current;
                last = madeUnderGrant ? lastIdTime() : "-infinity";
                drop();
            }
            if (g != null) registry.release(g, last);
        } finally {
            ops.unlock();
        }
    }

    /** Releases the grant and leaves the registry (which no longer releases it at its close). */
    @Override
    public void close() {
        try {
            releaseNow();
        } finally {
            registry.forget(this);
        }
    }
}
