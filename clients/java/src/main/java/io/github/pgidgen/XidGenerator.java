package io.github.pgidgen;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.LongSupplier;

/**
 * An xid12 generator with a machine id you assign (or the server's default rule: the first 3
 * bytes of md5 of the host name), the server's rule: ids strictly increasing, a counter wrap or
 * a clock step back borrowing the next second. Thread-safe.
 */
public final class XidGenerator {
    private final int machine;
    private final int pid;
    private final LongSupplier clockMs;
    private int counter;
    private long lastTime = -1;
    private int lastCounter;

    public XidGenerator() {
        this(defaultMachine(), defaultPid(), System::currentTimeMillis);
    }

    public XidGenerator(int machine, int pid, LongSupplier clockMs) {
        Xid.fromParts(0, machine, pid, 0); // checks the ranges
        this.machine = machine;
        this.pid = pid;
        this.clockMs = clockMs;
        this.counter = ThreadLocalRandom.current().nextInt(Xid.MAX_COUNTER + 1);
    }

    /** The low 16 bits of this process's id. */
    public static int defaultPid() {
        return (int) (ProcessHandle.current().pid() & 0xFFFF);
    }

    /** The server's default: the first 3 bytes of the MD5 digest of the host name. */
    public static int defaultMachine() {
        try {
            String host;
            Path p = Path.of("/proc/sys/kernel/hostname");
            host = Files.exists(p) ? Files.readString(p).strip() : java.net.InetAddress.getLocalHost().getHostName();
            byte[] d = MessageDigest.getInstance("MD5").digest(host.getBytes(StandardCharsets.UTF_8));
            return (d[0] & 0xFF) << 16 | (d[1] & 0xFF) << 8 | d[2] & 0xFF;
        } catch (Exception e) {
            return ThreadLocalRandom.current().nextInt(Xid.MAX_MACHINE + 1);
        }
    }

    public synchronized Xid next() {
        long now = Math.floorDiv(clockMs.getAsLong(), 1000);
        int c = counter;
        long middle = (long) machine << 16 | pid;
        long t = XidGrantState.stepTime(lastTime, middle, lastCounter, now, middle, c);
        if (t > Xid.MAX_TIME) Xid.fromParts(t, machine, pid, c); // the server's error
        lastTime = t;
        lastCounter = c;
        counter = (c + 1) & Xid.MAX_COUNTER;
        return Xid.ofFields(t, machine, pid, c);
    }
}
