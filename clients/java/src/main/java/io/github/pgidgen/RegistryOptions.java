package io.github.pgidgen;

import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * A Registry's settings. writer: this writer's name in the registry (default "host:pid"); pool:
 * the pool grants come from ("app"); maxWait: how long a generator waits for a window that starts
 * a little after its clock, and (Snowflake) for a clock stepped back behind its last id (5 s);
 * timeout: how long one call to the registry may take, connecting included, and about the
 * longest {@code close()} takes (5 s); renewWait: how long an id call waits at the window's end
 * for the renewal before RegistryUnavailable (1 s); clockMs: unix milliseconds (for tests).
 */
public final class RegistryOptions {
    String writer = defaultWriter();
    String pool = "app";
    Duration maxWait = Duration.ofSeconds(5);
    Duration timeout = Duration.ofSeconds(5);
    Duration renewWait = Duration.ofSeconds(1);
    LongSupplier clockMs = System::currentTimeMillis;

    public static RegistryOptions defaults() {
        return new RegistryOptions();
    }

    static String defaultWriter() {
        String host;
        try {
            java.nio.file.Path p = java.nio.file.Path.of("/proc/sys/kernel/hostname");
            host = java.nio.file.Files.exists(p) ? java.nio.file.Files.readString(p).strip()
                    : java.net.InetAddress.getLocalHost().getHostName();
        } catch (java.io.IOException e) {
            host = "localhost";
        }
        return host + ":" + ProcessHandle.current().pid();
    }

    public RegistryOptions writer(String writer) {
        this.writer = writer;
        return this;
    }

    public RegistryOptions pool(String pool) {
        this.pool = pool;
        return this;
    }

    public RegistryOptions maxWait(Duration d) {
        this.maxWait = d;
        return this;
    }

    public RegistryOptions timeout(Duration d) {
        if (d.isNegative() || d.isZero()) throw new IllegalArgumentException("timeout must be positive");
        this.timeout = d;
        return this;
    }

    public RegistryOptions renewWait(Duration d) {
        if (d.isNegative()) throw new IllegalArgumentException("renewWait must not be negative");
        this.renewWait = d;
        return this;
    }

    public RegistryOptions clockMs(LongSupplier clockMs) {
        this.clockMs = clockMs;
        return this;
    }
}
