package io.github.pgidgen;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * The edge store without a server: tests/vectors/edge_store.json (the table, its columns, the
 * enrolment row, how ids are stored) and every case of edge_traces.json (the offline rule, its
 * refusals with their classes and words, the renewed and the released window's end), the caller's
 * transaction, two connections and many threads on one file.
 */
@SuppressWarnings("unchecked")
class EdgeVectorsTest {
    private static final DateTimeFormatter AT = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'", Locale.ROOT)
            .withZone(ZoneOffset.UTC);
    private static final long LO = 1_800_000_000_000_000L;

    @TempDir
    Path dir;

    private static Connection open(String where) throws SQLException {
        return DriverManager.getConnection("jdbc:sqlite:" + where);
    }

    /** A row as the table stores it, for "unchanged". */
    private static List<Object> row(Connection db, String kind) throws SQLException {
        try (PreparedStatement ps = db.prepareStatement("SELECT *, typeof(last_id) FROM pg_idgen_edge WHERE kind = ?")) {
            ps.setString(1, kind);
            try (ResultSet rs = ps.executeQuery()) {
                List<Object> out = new ArrayList<>();
                if (!rs.next()) return out;
                for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) out.add(rs.getObject(i));
                return out;
            }
        }
    }

    private static Object column(Connection db, String kind, String column) throws SQLException {
        try (Statement s = db.createStatement();
                ResultSet rs = s.executeQuery("SELECT " + column + " FROM pg_idgen_edge WHERE kind = '" + kind + "'")) {
            assertTrue(rs.next());
            Object v = rs.getObject(1);
            return v instanceof Integer n ? Long.valueOf(n) : v;
        }
    }

    /** A stored row of the traces' form (any grant_id, token, writer; syncs 0; attempt null). */
    private static void write(Connection db, String kind, Map<String, Object> st) throws SQLException {
        try (PreparedStatement ps = db.prepareStatement(EdgeStore.ENROL)) {
            Object[] values = {kind, 41L, 42L, st.get("slot"), st.get("lo_us"), st.get("hi_us"), st.get("epoch_ms"), "trace-writer"};
            for (int i = 0; i < values.length; i++) ps.setObject(i + 1, values[i]);
            ps.executeUpdate();
        }
        try (PreparedStatement ps = db.prepareStatement("UPDATE pg_idgen_edge SET last_id = ?, last_id_us = ?, cloned = ?")) {
            ps.setObject(1, stored(kind, st.get("last_id")));
            ps.setObject(2, st.get("last_id_us"));
            ps.setObject(3, st.get("cloned"));
            ps.executeUpdate();
        }
    }

    /** A vector's id as the row stores it: xid12 as its text, Snowflake as an integer. */
    private static Object stored(String kind, Object id) {
        if (id == null || kind.equals("snowflake")) return id;
        return Xid.fromBytes(HexFormat.of().parseHex((String) id)).toString();
    }

    private static String at(long us) {
        return AT.format(Instant.ofEpochMilli(Math.floorDiv(us, 1000L)));
    }

    /** A template of edge_traces.json's words with these texts put in (the test's own rendering). */
    private static String words(String name, Map<String, String> values) throws Exception {
        return WordsTest.expected("edge_traces.json", name, values);
    }

    @Test
    void theTableIsTheSharedOne() throws Exception {
        Map<String, Object> v = Vectors.read("edge_store.json");
        assertEquals(v.get("table"), EdgeStore.TABLE);
        assertEquals(v.get("enrol"), EdgeStore.ENROL);
        assertEquals(String.join(", ", (List<String>) v.get("columns")), EdgeStore.COLUMNS);
        try (Connection db = open(dir.resolve("device.db").toString())) {
            new EdgeStore(db, "xid12", "test-device", () -> LO);
            new EdgeStore(db, "snowflake", "test-device", () -> LO); // the table exists: no error
            List<String> cols = new ArrayList<>();
            try (Statement s = db.createStatement();
                    ResultSet rs = s.executeQuery("SELECT name FROM pragma_table_info('pg_idgen_edge') ORDER BY cid")) {
                while (rs.next()) cols.add(rs.getString(1));
            }
            List<String> want = new ArrayList<>(List.of("kind"));
            want.addAll((List<String>) v.get("columns"));
            assertEquals(want, cols);
        }
    }

    @Test
    void theMarkIsStoredAsTheOthersStoreIt() throws Exception {
        try (Connection db = open(":memory:")) {
            EdgeStore x = new EdgeStore(db, "xid12", "d", () -> LO + 5);
            EdgeStore s = new EdgeStore(db, "snowflake", "d", () -> LO + 5);
            write(db, "xid12", Map.of("slot", 12582913L, "lo_us", LO, "hi_us", LO + 60_000_000L));
            Map<String, Object> sf = new HashMap<>(Map.of("slot", 800L, "lo_us", LO, "hi_us", LO + 60_000_000L));
            sf.put("epoch_ms", 1288834974657L);
            write(db, "snowflake", sf);
            Xid id = x.nextXid();
            long f = s.nextSnowflake();
            assertEquals(List.of(id.toString(), "text"), List.of(column(db, "xid12", "last_id"), column(db, "xid12", "typeof(last_id)")));
            assertEquals(List.of(f, "integer"), List.of(column(db, "snowflake", "last_id"), column(db, "snowflake", "typeof(last_id)")));
            EdgeGrant g = x.grant();
            assertEquals(id, g.lastId());
            assertEquals(Instant.ofEpochSecond(1_800_000_000L), g.lastIdTime());
            assertEquals(f, s.grant().lastId());
            assertEquals(12582913, g.slot());
            assertThrows(IllegalStateException.class, x::nextSnowflake);
            assertThrows(IllegalArgumentException.class, () -> new EdgeStore(db, "uuid", "d", null));
        }
    }

    @Test
    void everyRefusalHasItsJavaClass() throws Exception {
        Map<String, Object> refusals = (Map<String, Object>) Vectors.read("edge_traces.json").get("refusals");
        assertEquals(Set.of("cloned", "clock_before_window", "window_ended", "used_up"), refusals.keySet());
        for (Object r : refusals.values()) {
            String cls = ((String) ((Map<String, Object>) r).get("java")).split(" ")[0];
            assertTrue(RegistryException.class.isAssignableFrom(Class.forName("io.github.pgidgen." + cls)), cls);
        }
        for (Map<String, Object> w : (List<Map<String, Object>>) Vectors.read("edge_traces.json").get("words")) {
            if (w.get("message") != null) assertTrue(RegistryWords.names().contains("edge." + w.get("name")), (String) w.get("name"));
        }
    }

    @TestFactory
    Stream<DynamicTest> edgeTraces() throws Exception {
        Map<String, Object> v = Vectors.read("edge_traces.json");
        List<Map<String, Object>> cases = (List<Map<String, Object>>) v.get("cases");
        assertTrue(cases.size() >= 10);
        Map<String, Object> refusals = (Map<String, Object>) v.get("refusals");
        return cases.stream().map(c -> DynamicTest.dynamicTest((String) c.get("name"), () -> runCase(c, refusals)));
    }

    private static void runCase(Map<String, Object> c, Map<String, Object> refusals) throws Exception {
        String kind = (String) c.get("kind");
        Map<String, Object> st = (Map<String, Object>) c.get("state");
        long slot = (Long) st.get("slot");
        long lo = (Long) st.get("lo_us");
        AtomicLong now = new AtomicLong();
        try (Connection db = open(":memory:")) {
            EdgeStore store = new EdgeStore(db, kind, "trace-device", now::get);
            if (c.get("pid") != null) {
                int pid = ((Long) c.get("pid")).intValue();
                int counter = ((Long) c.get("counter")).intValue();
                store.pid = () -> pid;
                store.counter = () -> counter;
            }
            write(db, kind, st);
            for (Map<String, Object> step : (List<Map<String, Object>>) c.get("steps")) {
                Map<String, Object> expect = (Map<String, Object>) step.get("expect");
                if (step.containsKey("renew")) {
                    long hi = (Long) ((Map<String, Object>) step.get("renew")).get("hi_us");
                    Object mark = column(db, kind, "last_id");
                    store.renewed(0, hi);
                    assertEquals(hi, column(db, kind, "hi_us"));
                    assertEquals(mark, column(db, kind, "last_id"));
                    continue;
                }
                if (step.containsKey("release")) {
                    Long[] got = store.prepareRelease();
                    assertEquals(expect.get("hi_us"), got[0]);
                    assertEquals(expect.get("hi_us"), column(db, kind, "hi_us"));
                    continue;
                }
                long n = (Long) step.get("now_us");
                now.set(n);
                List<Object> before = row(db, kind);
                Object mark = column(db, kind, "last_id");
                if (expect.containsKey("refused")) {
                    String name = (String) expect.get("refused");
                    RegistryException e = assertThrows(RegistryException.class,
                            () -> { if (kind.equals("xid12")) store.nextXid(); else store.nextSnowflake(); });
                    String cls = ((String) ((Map<String, Object>) refusals.get(name)).get("java")).split(" ")[0];
                    assertEquals(cls, e.getClass().getSimpleName(), name);
                    assertEquals(refusalWords(name, db, kind, n), e.getMessage());
                    assertEquals(before, row(db, kind), "the row changed on a refusal");
                    continue;
                }
                long hi = (Long) column(db, kind, "hi_us");
                long idUs;
                if (kind.equals("xid12")) {
                    Xid id = store.nextXid();
                    assertEquals(expect.get("id"), HexFormat.of().formatHex(id.toBytes()), c.get("name") + " at " + n);
                    assertEquals(slot, id.machine());
                    assertTrue(mark == null || id.compareTo(Xid.parse((String) mark)) > 0, "not above the mark");
                    assertEquals(id.toString(), column(db, kind, "last_id"));
                    idUs = id.unixSeconds() * 1_000_000L;
                } else {
                    long id = store.nextSnowflake();
                    assertEquals(expect.get("id"), id, c.get("name") + " at " + n);
                    assertEquals(slot, Snowflake.worker(id));
                    assertTrue(mark == null || id > (Long) mark, "not above the mark");
                    assertEquals(id, column(db, kind, "last_id"));
                    idUs = Snowflake.unixMs(id, (Long) st.get("epoch_ms")) * 1000L;
                }
                assertEquals(expect.get("last_id_us"), idUs);
                assertEquals(expect.get("last_id_us"), column(db, kind, "last_id_us"));
                assertTrue(idUs >= lo && idUs < hi, "the id's time is outside the window");
            }
        }
    }

    /** The words a refusal says for the row as it is (edge_traces.json's words, the message face). */
    private static String refusalWords(String name, Connection db, String kind, long now) throws Exception {
        Object cloned = column(db, kind, "cloned");
        if (name.equals("cloned")) return words("cloned", Map.of("kept", (String) cloned));
        String grant = words("grant", Map.of("grant_id", "41", "kind", kind, "slot", column(db, kind, "slot").toString(),
                "lo", at((Long) column(db, kind, "lo_us")), "hi", at((Long) column(db, kind, "hi_us")), "device", "trace-device"));
        if (name.equals("used_up")) {
            return words("used_up", Map.of("grant", grant, "last", at((Long) column(db, kind, "last_id_us")), "now", at(now)));
        }
        return words(name, Map.of("now", at(now), "grant", grant));
    }

    private static Map<String, Object> xidState() {
        return Map.of("slot", 12582913L, "lo_us", LO, "hi_us", LO + 86_400_000_000L);
    }

    @Test
    void anIdInTheCallersTransactionCommitsOrRollsBackWithItsRow() throws Exception {
        String file = dir.resolve("device.db").toString();
        Xid first;
        try (Connection db = open(file)) {
            EdgeStore store = new EdgeStore(db, "xid12", "d", () -> LO + 1);
            store.counter = () -> 7; // the first id's counter (random otherwise)
            write(db, "xid12", xidState());
            try (Statement s = db.createStatement()) {
                s.execute("CREATE TABLE rows (id TEXT PRIMARY KEY)");
            }
            db.setAutoCommit(false);
            first = store.nextXid();
            insert(db, first);
            db.rollback();
            assertNull(store.grant().lastId(), "the mark stayed after a rollback");
            assertEquals(first, store.nextXid(), "the id of a rolled back transaction was not made again");
            insert(db, first);
            Xid second = store.nextXid();
            insert(db, second);
            db.commit();
            // enrol and sync commit their own writes: never inside the caller's transaction
            RegistryException e = assertThrows(RegistryException.class, () -> store.sync(null));
            assertEquals(words("sqlite_in_transaction", Map.of()), e.getMessage());
            assertThrows(RegistryException.class, () -> store.enrol(null));
            db.setAutoCommit(true);
        }
        try (Connection db = open(file)) { // reopened: the committed mark and rows
            EdgeStore store = new EdgeStore(db, "xid12", "d", () -> LO + 1);
            Xid third = store.nextXid();
            assertEquals(first.counter() + 2, third.counter());
            try (Statement s = db.createStatement(); ResultSet rs = s.executeQuery("SELECT count(*) FROM rows")) {
                rs.next();
                assertEquals(2, rs.getInt(1));
            }
        }
    }

    private static void insert(Connection db, Xid id) throws SQLException {
        try (PreparedStatement ps = db.prepareStatement("INSERT INTO rows VALUES (?)")) {
            ps.setString(1, id.toString());
            ps.executeUpdate();
        }
    }

    @Test
    void threadsAndASecondConnectionNeverMakeAnIdTwice() throws Exception {
        String file = dir.resolve("device.db").toString();
        int threads = 4;
        int each = 300;
        try (Connection a = open(file); Connection b = open(file)) {
            for (Connection c : List.of(a, b)) {
                try (Statement s = c.createStatement()) {
                    s.execute("PRAGMA synchronous = OFF");
                    s.execute("PRAGMA busy_timeout = 60000");
                }
            }
            // one clock second for all: every id after the first continues the mark's counter
            EdgeStore sa = new EdgeStore(a, "xid12", "d", () -> LO);
            EdgeStore sb = new EdgeStore(b, "xid12", "d", () -> LO);
            write(a, "xid12", xidState());
            Set<Xid> all = ConcurrentHashMap.newKeySet();
            ExecutorService pool = Executors.newFixedThreadPool(2 * threads);
            try {
                List<Future<?>> done = new ArrayList<>();
                for (EdgeStore s : List.of(sa, sb)) {
                    for (int t = 0; t < threads; t++) {
                        done.add(pool.submit(() -> {
                            Xid last = null;
                            for (int i = 0; i < each; i++) {
                                Xid id = s.nextXid();
                                assertTrue(last == null || id.compareTo(last) > 0, "not increasing in a thread");
                                assertTrue(all.add(id), "an id made twice: " + id);
                                last = id;
                            }
                            return null;
                        }));
                    }
                }
                for (Future<?> f : done) f.get();
            } finally {
                pool.shutdownNow();
            }
            assertEquals(2 * threads * each, all.size());
            Set<Long> seconds = new HashSet<>();
            for (Xid x : all) seconds.add(x.unixSeconds());
            assertEquals(Set.of(1_800_000_000L), seconds);
            Xid max = all.stream().max(Xid::compareTo).get();
            assertEquals(max, sa.grant().lastId());
        }
    }

    @Test
    void aStoreWithoutAGrantOrWithALiveOneSaysSo() throws Exception {
        try (Connection db = open(":memory:")) {
            EdgeStore store = new EdgeStore(db, "snowflake", "box-1", () -> LO);
            assertNull(store.grant());
            RegistryException e = assertThrows(RegistryException.class, store::nextSnowflake);
            assertEquals(words("no_grant", Map.of("kind", "snowflake", "device", "box-1")), e.getMessage());
            e = assertThrows(RegistryException.class, () -> store.sync(null));
            assertEquals(words("no_grant_to_sync", Map.of("kind", "snowflake", "device", "box-1")), e.getMessage());
            Map<String, Object> st = new HashMap<>(Map.of("slot", 800L, "lo_us", LO, "hi_us", LO + 1000L));
            st.put("epoch_ms", 1288834974657L);
            write(db, "snowflake", st);
            e = assertThrows(RegistryException.class, () -> store.enrol(null));
            assertTrue(e.getMessage().startsWith("this store already holds grant 41 (snowflake slot 800, window "), e.getMessage());
            assertTrue(e.getMessage().contains("release(connection)"));
            assertNotNull(store.grant());
        }
    }
}
