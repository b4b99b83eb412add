package io.github.pgidgen;

import java.time.Instant;

/**
 * The grant-bound xid12 rule (docs/formats.md §8; tests/vectors/grant_traces.json), pure: the
 * machine id is the slot, pid and counter fill the rest; clock readings in unix seconds. A
 * counter wrap or a clock step back borrows the next second, never at or past hi. Not
 * thread-safe: its owner locks.
 */
final class XidGrantState {
    int slot = -1;
    long lo;
    long hi;
    Xid id;
    long waitUntil;
    final long maxWait;
    final int pid;
    int counter;
    long lastTime = -1;
    private int lastMachine;
    private int lastCounter;

    XidGrantState(int pid, int counterStart, long maxWaitSeconds) {
        if (pid < 0 || pid > Xid.MAX_PID) throw new IllegalArgumentException("xid12 pid " + pid + " is outside the range 0 .. " + Xid.MAX_PID);
        this.pid = pid;
        this.counter = counterStart & Xid.MAX_COUNTER;
        this.maxWait = maxWaitSeconds;
    }

    boolean made() {
        return lastTime >= 0;
    }

    void bind(int slot, long lo, long hi) {
        if (slot < 0 || slot > Xid.MAX_MACHINE) throw new IllegalArgumentException("xid12 slot " + slot + " is outside 0 .. " + Xid.MAX_MACHINE);
        if (lo > hi) throw new IllegalArgumentException("a grant's window [" + lo + ", " + hi + ") ends before it starts");
        this.slot = slot;
        this.lo = lo;
        this.hi = hi;
    }

    void unbind() {
        slot = -1;
        lo = 0;
        hi = 0;
    }

    /** The second of the next id (the server's rule): above the last id, never below the clock. */
    static long stepTime(long lastTime, long lastMiddle, int lastCounter, long now, long middle, int counter) {
        if (lastTime < 0) return now;
        long t = Math.max(now, lastTime);
        if (t == lastTime && (middle < lastMiddle || middle == lastMiddle && counter <= lastCounter)) t = lastTime + 1;
        return t;
    }

    GrantStep step(long nowSeconds) {
        long t = nowSeconds;
        if (t >= hi) return GrantStep.RENEW;
        if (t < lo) {
            if (lo - t <= maxWait) {
                waitUntil = lo;
                return GrantStep.WAIT;
            }
            throw new ClockBeforeWindow(RegistryWords.of("clock_before_window", "behind", (lo - t) * 1000,
                    "start", Instant.ofEpochSecond(lo), "kind", "xid12", "slot", slot, "max_wait", maxWait * 1000));
        }
        int c = counter;
        long middle = (long) slot << 16 | pid;
        long time = stepTime(lastTime, (long) lastMachine << 16 | pid, lastCounter, t, middle, c);
        if (time >= hi || time > Xid.MAX_TIME) return GrantStep.RENEW;
        lastTime = time;
        lastMachine = slot;
        lastCounter = c;
        counter = (c + 1) & Xid.MAX_COUNTER;
        id = Xid.ofFields(time, slot, pid, c);
        return GrantStep.ID;
    }
}
