package io.github.pgidgen;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Edge devices with EdgeStore against the registry (the device's connection through PgBouncer in
 * transaction mode): a device enrols in pool 'edge', makes ids offline into its SQLite file for
 * days, syncs (report + renew); a copy of its file on a second device is found at its sync
 * (23505, both devices named); the original's rows merge with every id covered (idgen_verify);
 * the release frees the id-time after the last id. A lost sync reply is not taken for a copy.
 * The devices' clocks are fake (the real time plus the days they spend offline); the server's is
 * real.
 */
@Tag("server")
class EdgeServerTest {
    private static final long DAY_US = 86_400_000_000L;

    @TempDir
    Path dir;

    private static long nowUs() {
        return ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now());
    }

    private static Connection device(Path file) throws SQLException {
        Connection db = DriverManager.getConnection("jdbc:sqlite:" + file);
        try (Statement s = db.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS rows (id TEXT PRIMARY KEY, n INTEGER)");
        }
        return db;
    }

    /** Ids made over days of the device clock, each committed with its row. */
    private static List<Object> offline(Connection db, EdgeStore store, AtomicLong clock, int days, int perDay, int start)
            throws SQLException {
        List<Object> ids = new ArrayList<>();
        db.setAutoCommit(false);
        for (int i = 0; i < days * perDay; i++) {
            Object id = store.kind().equals("xid12") ? store.nextXid() : (Object) store.nextSnowflake();
            try (PreparedStatement ps = db.prepareStatement("INSERT INTO rows VALUES (?, ?)")) {
                ps.setString(1, id.toString());
                ps.setInt(2, start + i);
                ps.executeUpdate();
            }
            db.commit();
            ids.add(id);
            clock.addAndGet(DAY_US / perDay);
        }
        db.setAutoCommit(true);
        return ids;
    }

    /** The server's grant: pool, slot, lo, hi, released_at. */
    private static Object[] grantRow(Connection pg, long grantId) throws SQLException {
        try (PreparedStatement ps = pg.prepareStatement("SELECT pool, slot, lo, hi, released_at FROM idgen_grants WHERE grant_id = ?")) {
            ps.setLong(1, grantId);
            try (ResultSet rs = ps.executeQuery()) {
                assertTrue(rs.next());
                OffsetDateTime released = rs.getObject(5, OffsetDateTime.class);
                return new Object[] {rs.getString(1), rs.getInt(2), rs.getObject(3, OffsetDateTime.class).toInstant(),
                        rs.getObject(4, OffsetDateTime.class).toInstant(), released == null ? null : released.toInstant()};
            }
        }
    }

    private static List<Object> report(Connection pg, long grantId) throws SQLException {
        try (PreparedStatement ps = pg.prepareStatement("SELECT device, syncs FROM idgen_registry_report WHERE grant_id = ?")) {
            ps.setLong(1, grantId);
            try (ResultSet rs = ps.executeQuery()) {
                assertTrue(rs.next());
                return List.of(rs.getString(1), rs.getLong(2));
            }
        }
    }

    private static Connection bouncer(String db) throws SQLException {
        return Server.connect(Server.in(Server.bouncerUrl(), db));
    }

    @Test
    void anXid12DeviceOfflineSyncedCopiedMergedReleased() throws Exception {
        String name = Server.freshDatabase("java_edge_xid12");
        try (Connection pg = bouncer(name); Connection admin = Server.connect(Server.in(Server.url(), name))) {
            AtomicLong clockA = new AtomicLong(nowUs());
            Connection a = device(dir.resolve("phone-a.db"));
            EdgeStore storeA = new EdgeStore(a, "xid12", "phone-a", clockA::get);
            EdgeGrant g = storeA.enrol(pg, "edge-test@phone-a", EdgeStore.LEASE, "edge");
            assertTrue(g.slot() >= 12_582_912 && g.slot() < 16_777_216, "not an edge machine id: " + g.slot());
            assertEquals(0, g.syncs());
            assertNull(g.lastId());
            Object[] row = grantRow(admin, g.grantId());
            assertEquals(List.of("edge", g.slot(), g.lo(), g.hi()), List.of(row[0], row[1], row[2], row[3]));
            Duration window = Duration.between(g.lo(), g.hi());
            assertTrue(window.compareTo(Duration.ofDays(28)) >= 0 && window.compareTo(Duration.ofDays(28).plusSeconds(10)) <= 0, window.toString());
            RegistryException again = assertThrows(RegistryException.class, () -> storeA.enrol(pg));
            assertTrue(again.getMessage().startsWith("this store already holds grant " + g.grantId()), again.getMessage());

            // Three days offline, then back online: report 1, and the window runs 28 days from now.
            List<Object> before = offline(a, storeA, clockA, 3, 40, 0);
            EdgeGrant s1 = storeA.sync(pg);
            assertEquals(1, s1.syncs());
            assertEquals(before.get(before.size() - 1), s1.lastId());
            assertTrue(!s1.hi().isBefore(g.hi()));
            assertEquals(s1.hi(), grantRow(admin, g.grantId())[3]);
            assertEquals(List.of("phone-a", 1L), report(admin, g.grantId()));

            // A backup of the file, restored on a second device.
            Files.copy(dir.resolve("phone-a.db"), dir.resolve("phone-b.db"));
            AtomicLong clockB = new AtomicLong(clockA.get());
            Connection b = device(dir.resolve("phone-b.db"));
            EdgeStore storeB = new EdgeStore(b, "xid12", "phone-b", clockB::get);
            assertEquals(storeA.grant(), storeB.grant());

            // Both go on from the same state and the same time: the same ids.
            List<Object> afterA = offline(a, storeA, clockA, 2, 40, 1000);
            List<Object> afterB = offline(b, storeB, clockB, 2, 40, 1000);
            assertEquals(afterA, afterB); // why a copy must be found before the rows are merged
            assertEquals(2, storeA.sync(pg).syncs());
            DeviceConflict copy = assertThrows(DeviceConflict.class, () -> storeB.sync(pg));
            assertEquals("23505", copy.sqlstate());
            assertTrue(copy.getMessage().contains("grant " + g.grantId() + " is used by two devices"), copy.getMessage());
            assertTrue(copy.getMessage().contains("'phone-b'") && copy.getMessage().contains("'phone-a'"), copy.getMessage());
            DeviceConflict noMore = assertThrows(DeviceConflict.class, storeB::nextXid); // the copy makes no more ids
            assertTrue(noMore.getMessage().startsWith("no id is made: "), noMore.getMessage());
            assertEquals(List.of("phone-a", 2L), report(admin, g.grantId()));

            // The original's rows merged into PostgreSQL: every id covered by its grant.
            List<Object> all = new ArrayList<>(before);
            all.addAll(afterA);
            try (Statement s = admin.createStatement()) {
                s.execute("CREATE TABLE staging (id xid12 PRIMARY KEY, n int)");
                try (PreparedStatement ps = admin.prepareStatement("INSERT INTO staging VALUES (?, ?)");
                        ResultSet rs = a.createStatement().executeQuery("SELECT id, n FROM rows ORDER BY n")) {
                    int k = 0;
                    while (rs.next()) {
                        assertEquals(all.get(k++).toString(), rs.getString(1));
                        XidJdbc.bind(ps, 1, Xid.parse(rs.getString(1)));
                        ps.setInt(2, rs.getInt(2));
                        ps.addBatch();
                    }
                    ps.executeBatch();
                    assertEquals(all.size(), k);
                }
                try (ResultSet rs = s.executeQuery("SELECT count(*) FROM idgen_verify('staging', 'id')")) {
                    rs.next();
                    assertEquals(0, rs.getLong(1), "ids not covered by a grant");
                }
                try (ResultSet rs = s.executeQuery("SELECT DISTINCT w.writer FROM staging, idgen_writer_of(staging.id) w")) {
                    assertTrue(rs.next());
                    assertEquals("edge-test@phone-a", rs.getString(1));
                    assertTrue(!rs.next());
                }
            }

            // Done with the device: the window ends just after its last id, the rest is free.
            Xid last = (Xid) storeA.grant().lastId();
            storeA.release(pg);
            assertNull(storeA.grant());
            Object[] released = grantRow(admin, g.grantId());
            assertNotNull(released[4]);
            assertEquals(last.time().plusSeconds(1), released[3]);
            a.close();
            b.close();
        }
    }

    @Test
    void aSnowflakeDeviceSyncsAndReleases() throws Exception {
        String name = Server.freshDatabase("java_edge_snowflake");
        try (Connection pg = bouncer(name); Connection admin = Server.connect(Server.in(Server.url(), name));
                Connection d = device(dir.resolve("box.db"))) {
            AtomicLong clock = new AtomicLong(nowUs());
            EdgeStore store = new EdgeStore(d, "snowflake", "box-1", clock::get);
            EdgeGrant g = store.enrol(pg, "edge-test@box-1", Duration.ofDays(7), "edge");
            assertTrue(g.slot() >= 768 && g.slot() <= 1023, "not an edge worker id: " + g.slot());
            assertNotNull(g.epochMs());
            List<Object> ids = offline(d, store, clock, 2, 50, 0);
            for (Object id : ids) assertEquals(g.slot(), Snowflake.worker((Long) id));
            assertEquals(1, store.sync(pg, Duration.ofDays(7)).syncs());
            ids.addAll(offline(d, store, clock, 1, 50, 1000));
            try (Statement s = admin.createStatement()) {
                s.execute("CREATE TABLE staging (id bigint PRIMARY KEY)");
                try (PreparedStatement ps = admin.prepareStatement("INSERT INTO staging VALUES (?)")) {
                    for (Object id : ids) {
                        ps.setLong(1, (Long) id);
                        ps.addBatch();
                    }
                    ps.executeBatch();
                }
                try (ResultSet rs = s.executeQuery("SELECT count(*) FROM idgen_verify('staging', 'id')")) {
                    rs.next();
                    assertEquals(0, rs.getLong(1), "ids not covered by a grant");
                }
            }
            // A wrong token is the server's 42501, not swallowed; the store keeps its grant.
            try (Statement s = d.createStatement()) {
                s.execute("UPDATE pg_idgen_edge SET token = token + 1");
                assertThrows(WrongToken.class, () -> store.sync(pg));
                assertEquals(1, store.grant().syncs());
                s.execute("UPDATE pg_idgen_edge SET token = token - 1");
            }
            long last = (Long) ids.get(ids.size() - 1);
            store.release(pg);
            assertEquals(Snowflake.time(last, g.epochMs()).plusMillis(1), grantRow(admin, g.grantId())[3]);
        }
    }

    /** A connection whose commits reach the server and whose replies are then lost. */
    private static Connection replyLost(Connection real) {
        return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class},
                (proxy, m, args) -> {
                    try {
                        Object out = m.invoke(real, args);
                        if (m.getName().equals("commit")) throw new SQLException("the reply was lost", "08006");
                        return out;
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    @Test
    void aLostSyncReplyIsNotTakenForACopy() throws Exception {
        String name = Server.freshDatabase("java_edge_lost_reply");
        try (Connection pg = bouncer(name); Connection admin = Server.connect(Server.in(Server.url(), name));
                Connection db = device(dir.resolve("tablet.db"))) {
            AtomicLong clock = new AtomicLong(nowUs());
            EdgeStore store = new EdgeStore(db, "xid12", "tablet", clock::get);
            EdgeGrant g = store.enrol(pg, "edge-test@tablet", EdgeStore.LEASE, "edge");
            offline(db, store, clock, 1, 10, 0);
            assertThrows(RegistryUnavailable.class, () -> store.sync(replyLost(pg)));
            assertEquals(List.of("tablet", 1L), report(admin, g.grantId())); // the server has it
            Files.copy(dir.resolve("tablet.db"), dir.resolve("tablet-copy.db")); // the same count and attempt
            try (Statement s = db.createStatement();
                    ResultSet rs = s.executeQuery("SELECT syncs, attempt IS NOT NULL FROM pg_idgen_edge")) {
                rs.next();
                assertEquals(List.of(0L, true), List.of(rs.getLong(1), rs.getBoolean(2)));
            }
            offline(db, store, clock, 1, 10, 10);
            assertEquals(1, store.sync(pg).syncs()); // the count it missed, not DeviceConflict
            try (Statement s = db.createStatement(); ResultSet rs = s.executeQuery("SELECT attempt FROM pg_idgen_edge")) {
                rs.next();
                rs.getLong(1);
                assertTrue(rs.wasNull(), "the attempt stayed after its reply");
            }
            assertEquals(2, store.sync(pg).syncs()); // and on as usual
            try (Connection clone = device(dir.resolve("tablet-copy.db"))) {
                EdgeStore copy = new EdgeStore(clone, "xid12", "tablet-2", clock::get);
                DeviceConflict e = assertThrows(DeviceConflict.class, () -> copy.sync(pg));
                assertTrue(e.getMessage().contains("'tablet-2'") && e.getMessage().contains("'tablet'"), e.getMessage());
            }
        }
    }
}
