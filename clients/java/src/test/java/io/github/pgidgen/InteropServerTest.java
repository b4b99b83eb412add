package io.github.pgidgen;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Ids made here, read by the server; ids made by the server, read here: the same time, the same order. */
@Tag("server")
class InteropServerTest {
    @Test
    void javaIdsReadByTheServer() throws Exception {
        String db = Server.freshDatabase("java_interop");
        List<Long> flakes = new ArrayList<>();
        List<Xid> xids = new ArrayList<>();
        try (Registry reg = Registry.connect(Server.in(Server.url(), db), RegistryServerTest.props(),
                RegistryOptions.defaults().writer("java-interop"))) {
            GrantSnowflake f = reg.snowflake();
            GrantXid x = reg.xid12(Duration.ofMinutes(10));
            for (int i = 0; i < 1000; i++) {
                flakes.add(f.nextId());
                xids.add(x.next());
                if (i % 100 == 0) Thread.sleep(3); // several milliseconds, and ids of a later second
            }
            xids.add(Xid.fromParts(0, 0, 0, 0));
            xids.add(Xid.fromParts(Xid.MAX_TIME, Xid.MAX_MACHINE, Xid.MAX_PID, Xid.MAX_COUNTER));
            xids.add(Xid.fromParts(0x80000000L, 0x800000, 0x8000, 0x800000)); // high bits set: unsigned order
        }
        try (Connection c = Server.connect(Server.in(Server.url(), db)); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE j (n int, flake bigint, x xid12, xb xid12)");
            XidJdbc.register(c);
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO j VALUES (?, ?, ?, ?)")) {
                for (int i = 0; i < xids.size(); i++) {
                    ps.setInt(1, i);
                    if (i < flakes.size()) ps.setLong(2, flakes.get(i));
                    else ps.setNull(2, java.sql.Types.BIGINT);
                    XidJdbc.bind(ps, 3, xids.get(i)); // text, Types.OTHER
                    ps.setObject(4, PgXid.of(xids.get(i))); // PGobject (binary where pgjdbc sends it)
                    ps.addBatch();
                }
                ps.executeBatch();
            }
            try (ResultSet rs = s.executeQuery("SELECT count(*) FROM j WHERE x IS DISTINCT FROM xb")) {
                rs.next();
                assertEquals(0, rs.getLong(1));
            }
            // the server's times and parts equal this client's
            try (ResultSet rs = s.executeQuery("SELECT n, flake, (extract(epoch FROM snowflake_time(flake)) * 1000)::bigint, "
                    + "snowflake_worker(flake), x::text, extract(epoch FROM xid12_time(x))::bigint, xid12_pid(x), xid12_counter(x) "
                    + "FROM j ORDER BY n")) {
                while (rs.next()) {
                    int n = rs.getInt(1);
                    Xid x = xids.get(n);
                    if (n < flakes.size()) {
                        long id = flakes.get(n);
                        assertEquals(Snowflake.unixMs(id), rs.getLong(3));
                        assertEquals(Snowflake.worker(id), rs.getInt(4));
                    }
                    assertEquals(x.toString(), rs.getString(5));
                    assertEquals(x.unixSeconds(), rs.getLong(6));
                    assertEquals(x.pid(), rs.getInt(7));
                    assertEquals(x.counter(), rs.getInt(8));
                }
            }
            // the server's order equals this client's
            List<Long> sortedFlakes = new ArrayList<>(flakes);
            sortedFlakes.sort(null);
            assertEquals(flakes, sortedFlakes, "a generator's ids increase");
            assertEquals(sortedFlakes, column(s, "SELECT flake FROM j WHERE flake IS NOT NULL ORDER BY flake", false));
            List<Xid> sorted = new ArrayList<>(xids);
            sorted.sort(null);
            assertEquals(sorted, column(s, "SELECT x FROM j ORDER BY x", true));
            // the server's ids read here, text and binary
            try (ResultSet rs = s.executeQuery("SELECT gen_xid12() FROM generate_series(1, 1000)")) {
                while (rs.next()) XidJdbc.get(rs, 1);
            }
        }
        // binary: a connection that asks for binary results (prepareThreshold -1) gets PgXid from 12 bytes
        Properties p = RegistryServerTest.props();
        p.setProperty("prepareThreshold", "-1");
        try (Connection c = java.sql.DriverManager.getConnection(Server.in(Server.url(), db), p)) {
            XidJdbc.register(c);
            List<Xid> got = new ArrayList<>();
            List<Long> times = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement("SELECT x, extract(epoch FROM xid12_time(x))::bigint FROM j ORDER BY x");
                    ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    Object o = rs.getObject(1);
                    assertTrue(o instanceof PgXid, "binary xid12 read as " + o.getClass());
                    got.add(((PgXid) o).xid());
                    times.add(rs.getLong(2));
                }
            }
            List<Xid> sorted = new ArrayList<>(xids);
            sorted.sort(null);
            assertEquals(sorted, got);
            for (int i = 0; i < got.size(); i++) assertEquals(got.get(i).unixSeconds(), times.get(i));
        }
    }

    private static List<Object> column(Statement s, String sql, boolean xid) throws Exception {
        List<Object> out = new ArrayList<>();
        try (ResultSet rs = s.executeQuery(sql)) {
            while (rs.next()) out.add(xid ? XidJdbc.get(rs, 1) : (Object) rs.getLong(1));
        }
        return out;
    }
}
