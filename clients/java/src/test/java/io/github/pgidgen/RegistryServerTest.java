package io.github.pgidgen;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.StringReader;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;

/** The registry against a server (scripts/test_java.sh --server): directly and through PgBouncer in transaction mode. */
@Tag("server")
class RegistryServerTest {
    static final int THREADS = 8;
    static final int PER_THREAD = 50_000;

    /** What one writer made: its Snowflake and xid12 ids, per thread in the order made. */
    record Made(String writer, List<long[]> flakes, List<Xid[]> xids) {}

    private static Made run(Registry reg) throws Exception {
        GrantSnowflake flake = reg.snowflake(Duration.ofSeconds(3));
        GrantXid xid = reg.xid12(Duration.ofSeconds(3));
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        try {
            List<Future<long[]>> fs = new ArrayList<>();
            List<Future<Xid[]>> xs = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                fs.add(pool.submit(() -> {
                    long[] out = new long[PER_THREAD];
                    for (int i = 0; i < PER_THREAD; i++) out[i] = flake.nextId();
                    return out;
                }));
                xs.add(pool.submit(() -> {
                    Xid[] out = new Xid[PER_THREAD];
                    for (int i = 0; i < PER_THREAD; i++) out[i] = xid.next();
                    return out;
                }));
            }
            List<long[]> flakes = new ArrayList<>();
            List<Xid[]> xids = new ArrayList<>();
            for (Future<long[]> f : fs) flakes.add(f.get());
            for (Future<Xid[]> f : xs) xids.add(f.get());
            return new Made(reg.writer(), flakes, xids);
        } finally {
            pool.shutdown();
        }
    }

    @Test
    void eightThreadsTwoWritersOneThroughPgBouncer() throws Exception {
        String db = Server.freshDatabase("java_registry_many");
        RegistryOptions a = RegistryOptions.defaults().writer("java-direct");
        RegistryOptions b = RegistryOptions.defaults().writer("java-bouncer");
        Made ma;
        Made mb;
        // the two writers at once: one connects directly, the other through PgBouncer (transaction mode)
        try (Registry ra = Registry.connect(Server.in(Server.url(), db), props(), a);
                Registry rb = Registry.connect(Server.in(Server.bouncerUrl(), db), props(), b)) {
            ExecutorService two = Executors.newFixedThreadPool(2);
            Future<Made> fa = two.submit(() -> run(ra));
            Future<Made> fb = two.submit(() -> run(rb));
            ma = fa.get();
            mb = fb.get();
            two.shutdown();
            assertEquals("native", ra.edition());
            assertEquals("native", rb.edition());
        }
        Set<Long> flakes = new HashSet<>();
        Set<Xid> xids = new HashSet<>();
        for (Made m : List.of(ma, mb)) {
            for (long[] ids : m.flakes()) {
                for (int i = 0; i < ids.length; i++) {
                    assertTrue(flakes.add(ids[i]), "a Snowflake id made twice: " + ids[i]);
                    assertTrue(i == 0 || ids[i] > ids[i - 1], "not increasing in one thread");
                }
            }
            for (Xid[] ids : m.xids()) {
                for (int i = 0; i < ids.length; i++) {
                    assertTrue(xids.add(ids[i]), "an xid12 made twice: " + ids[i]);
                    assertTrue(i == 0 || ids[i].compareTo(ids[i - 1]) > 0, "not increasing in one thread");
                }
            }
        }
        assertEquals(2 * THREADS * PER_THREAD, flakes.size());
        assertEquals(2 * THREADS * PER_THREAD, xids.size());
        // Each writer's ids inside its own windows, as the server recorded them (after release:
        // each window ends just after its last id).
        try (Connection c = Server.connect(Server.in(Server.url(), db)); Statement s = c.createStatement()) {
            s.execute("CREATE TEMP TABLE made (writer text, flake bigint, x xid12)");
            StringBuilder rows = new StringBuilder();
            for (Made m : List.of(ma, mb)) {
                for (long[] ids : m.flakes()) for (long id : ids) rows.append(m.writer()).append('\t').append(id).append("\t\\N\n");
                for (Xid[] ids : m.xids()) for (Xid id : ids) rows.append(m.writer()).append("\t\\N\t").append(id).append('\n');
            }
            long n = c.unwrap(PGConnection.class).getCopyAPI().copyIn("COPY made FROM STDIN", new StringReader(rows.toString()));
            assertEquals(4L * THREADS * PER_THREAD, n);
            try (ResultSet rs = s.executeQuery("""
                    SELECT count(*) FILTER (WHERE flake IS NOT NULL AND NOT EXISTS (
                             SELECT 1 FROM idgen_registry_grant g
                              WHERE g.writer = m.writer AND g.kind = 'snowflake' AND g.slot = snowflake_worker(m.flake)
                                AND g.lo <= m.flake >> 22 AND m.flake >> 22 < g.hi)),
                           count(*) FILTER (WHERE x IS NOT NULL AND NOT EXISTS (
                             SELECT 1 FROM idgen_registry_grant g
                              WHERE g.writer = m.writer AND g.kind = 'xid12'
                                AND g.slot = ('x' || encode(xid12_machine(m.x), 'hex'))::bit(24)::int
                                AND g.lo <= extract(epoch FROM xid12_time(m.x)) AND extract(epoch FROM xid12_time(m.x)) < g.hi)),
                           count(DISTINCT flake), count(DISTINCT x),
                           (SELECT count(*) FROM idgen_registry_grant WHERE writer LIKE 'java-%')
                      FROM made m""")) {
                rs.next();
                assertEquals(0, rs.getLong(1), "Snowflake ids outside their writer's windows");
                assertEquals(0, rs.getLong(2), "xid12 ids outside their writer's windows");
                assertEquals(2L * THREADS * PER_THREAD, rs.getLong(3));
                assertEquals(2L * THREADS * PER_THREAD, rs.getLong(4));
                System.out.println("8 threads x 2 writers x 50,000 ids of each kind: distinct, inside the windows of "
                        + rs.getLong(5) + " grants");
            }
        }
    }

    static Properties props() {
        Properties p = new Properties();
        p.setProperty("user", "postgres");
        return p;
    }

    @Test
    void aRenewalThatCannotReachTheRegistryRaisesWithinTheBound() throws Exception {
        String db = Server.freshDatabase("java_registry_cut");
        AtomicBoolean cut = new AtomicBoolean();
        String url = Server.in(Server.bouncerUrl(), db);
        // A link that goes dead: once cut, opening a connection hangs (as a dropped link does).
        Registry.ConnectionFactory factory = () -> {
            if (cut.get()) {
                try {
                    Thread.sleep(30_000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                throw new SQLException("the link is cut", "08001");
            }
            return Server.connect(url);
        };
        try (Registry reg = new Registry(factory, RegistryOptions.defaults().writer("java-cut"))) {
            GrantSnowflake g = reg.snowflake(Duration.ofSeconds(2));
            long hiUs = g.grant().hiUs();
            g.nextId();
            cut.set(true);
            long last = 0;
            RegistryUnavailable err = null;
            long callStarted = 0;
            while (err == null) {
                callStarted = System.nanoTime();
                try {
                    last = g.nextId();
                } catch (RegistryUnavailable e) {
                    err = e;
                }
                Thread.sleep(1);
            }
            long waited = System.nanoTime() - callStarted;
            Instant raisedAt = Instant.now();
            // no id at or past the window's end; the call that found it ended waited at most renewWait (1 s) for the renewal
            assertTrue(Snowflake.unixMs(last, g.epochMs()) * 1000 < hiUs, "an id past the window");
            assertTrue(waited < 1_500_000_000L, "the id call waited " + waited / 1e6 + " ms");
            assertTrue(raisedAt.toEpochMilli() * 1000 >= hiUs - 1_000_000, "raised long before the window's end");
            assertTrue(err.getMessage().contains("could not be renewed"), err.getMessage());
            System.out.printf("a cut link: RegistryUnavailable %.0f ms into the id call, %.0f ms after the window's end%n",
                    waited / 1e6, (raisedAt.toEpochMilli() * 1000 - hiUs) / 1000.0);
        }
    }

    @Test
    void aRefusedRenewalRaisesItsOwnError() throws Exception {
        String db = Server.freshDatabase("java_registry_refused");
        try (Connection c = Server.connect(Server.in(Server.url(), db)); Statement s = c.createStatement()) {
            s.execute("DROP ROLE IF EXISTS java_writer");
            s.execute("CREATE ROLE java_writer LOGIN");
            s.execute("SELECT idgen_pool_allow('app', 'java_writer')");
            Properties p = new Properties();
            p.setProperty("user", "java_writer");
            try (Registry reg = Registry.connect(Server.in(Server.bouncerUrl(), db), p, RegistryOptions.defaults().writer("java-refused"))) {
                GrantSnowflake g = reg.snowflake(Duration.ofSeconds(2));
                g.nextId();
                long hiUs = g.grant().hiUs();
                s.execute("SELECT idgen_pool_disallow('app', 'java_writer')");
                long callStarted = 0;
                RegistryException err = null;
                while (err == null) {
                    callStarted = System.nanoTime();
                    try {
                        g.nextId();
                    } catch (RegistryException e) {
                        err = e;
                    }
                    Thread.sleep(1);
                }
                long waited = System.nanoTime() - callStarted;
                assertTrue(err instanceof PoolNotAllowed || err instanceof WrongToken, err.getClass() + ": " + err.getMessage());
                assertTrue(waited < 1_500_000_000L, "waited " + waited / 1e6 + " ms");
                assertTrue(Instant.now().toEpochMilli() * 1000 >= hiUs - 1_000_000);
                System.out.println("a refused renewal: " + err.getClass().getSimpleName() + " (" + err.sqlstate() + ")");
            }
        }
    }

    @Test
    void aFencedRegistryRaisesRegistryFencedWithItsEnd() throws Exception {
        String db = Server.freshDatabase("java_registry_fenced");
        try (Connection c = Server.connect(Server.in(Server.url(), db))) {
            OffsetDateTime seenAt;
            try (Registry first = Registry.connect(Server.in(Server.url(), db), props(), RegistryOptions.defaults().writer("java-first"))) {
                first.snowflake().nextId(); // the registry's first acquire records its origin
            }
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("""
                    INSERT INTO idgen_registry_origin (system_identifier, timeline, seen_at, fenced, reason)
                    SELECT o.system_identifier, o.timeline, clock_timestamp(), true, 'a failover faked by the test'
                      FROM idgen_registry_origin o ORDER BY o.seen_at DESC LIMIT 1
                    RETURNING seen_at""")) {
                rs.next();
                seenAt = rs.getObject(1, OffsetDateTime.class);
            }
            Instant fenceEnds;
            try (PreparedStatement ps = c.prepareStatement("SELECT ?::timestamptz + idgen_registry_seconds("
                    + "idgen_registry_fence_lease('snowflake', int4range(0, 768))) + idgen_registry_fence_margin()")) {
                ps.setObject(1, seenAt);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    fenceEnds = rs.getObject(1, OffsetDateTime.class).toInstant();
                }
            }
            try (Registry reg = Registry.connect(Server.in(Server.bouncerUrl(), db), props(), RegistryOptions.defaults().writer("java-after"))) {
                RegistryFenced e = assertThrows(RegistryFenced.class, reg::snowflake);
                assertEquals("IG001", e.sqlstate());
                assertNotNull(e.until(), e.getMessage());
                assertEquals(fenceEnds, e.until(), e.getMessage());
                assertTrue(e.until().isAfter(Instant.now()));
                assertTrue(e.getMessage().contains("a failover faked by the test"), e.getMessage());
                // xid12 grants go on from a new stripe
                assertNotNull(reg.xid12().next());
                System.out.println("fenced: " + e.getMessage());
            }
        }
    }
}
