package io.github.pgidgen;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The Registry's bounds without a server: a registry that hangs or refuses to connect. */
class RegistryBoundsTest {
    @Test
    void aHangingConnectionIsAbandonedAtTheTimeout() {
        Registry.ConnectionFactory hangs = () -> {
            try {
                Thread.sleep(60_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            throw new SQLException("interrupted", "08001");
        };
        try (Registry reg = new Registry(hangs, RegistryOptions.defaults().timeout(Duration.ofMillis(500)))) {
            long start = System.nanoTime();
            RegistryUnavailable e = assertThrows(RegistryUnavailable.class, reg::snowflake);
            long took = System.nanoTime() - start;
            // the bound is the timeout (0.5 s) plus 0.25 s of grace; a hang lasts 60 s
            assertTrue(took < 5_000_000_000L, "took " + took / 1e6 + " ms");
            assertTrue(e.getMessage().contains("no answer within 0.5 s"), e.getMessage());
        }
    }

    @Test
    void aRefusedConnectionIsRegistryUnavailable() {
        Registry.ConnectionFactory refuses = () -> {
            throw new SQLException("Connection refused", "08001");
        };
        try (Registry reg = new Registry(refuses, RegistryOptions.defaults())) {
            RegistryUnavailable e = assertThrows(RegistryUnavailable.class, reg::xid12);
            assertTrue(e.getMessage().contains("Connection refused"), e.getMessage());
        }
    }

    @Test
    void aClosedRegistryMakesNoGenerator() {
        Registry reg = new Registry(() -> {
            throw new SQLException("unused", "08001");
        }, RegistryOptions.defaults());
        reg.close();
        assertThrows(RegistryException.class, reg::snowflake);
    }
}
