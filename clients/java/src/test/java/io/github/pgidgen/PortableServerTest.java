package io.github.pgidgen;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The portable edition (portable/dist's script, installed by scripts/test_java.sh into the
 * database java_portable, schema idgen, by its owner java_owner): the registry finds it by the
 * edition rule, through PgBouncer, and its ids are read by the portable edition's functions.
 */
@Tag("server")
class PortableServerTest {
    @Test
    void theRegistryOnThePortableEdition() throws Exception {
        Properties p = new Properties();
        p.setProperty("user", "java_owner");
        List<Long> flakes = new ArrayList<>();
        List<Xid> xids = new ArrayList<>();
        try (Registry reg = Registry.connect(Server.in(Server.bouncerUrl(), "java_portable"), p,
                RegistryOptions.defaults().writer("java-portable"))) {
            GrantSnowflake f = reg.snowflake();
            GrantXid x = reg.xid12();
            for (int i = 0; i < 1000; i++) {
                flakes.add(f.nextId());
                xids.add(x.next());
            }
            assertEquals("portable", reg.edition());
        }
        try (Connection c = java.sql.DriverManager.getConnection(Server.in(Server.url(), "java_portable"), p);
                Statement s = c.createStatement()) {
            assertEquals("portable", XidJdbc.register(c));
            s.execute("CREATE TEMP TABLE j (flake bigint, x idgen.xid12)");
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO j VALUES (?, ?)")) {
                for (int i = 0; i < flakes.size(); i++) {
                    ps.setLong(1, flakes.get(i));
                    XidJdbc.bind(ps, 2, xids.get(i));
                    ps.addBatch();
                }
                ps.executeBatch();
            }
            // each id inside a window the portable registry recorded for this writer
            try (ResultSet rs = s.executeQuery("""
                    SELECT count(*) FILTER (WHERE NOT EXISTS (SELECT 1 FROM idgen.idgen_grants g
                             WHERE g.writer = 'java-portable' AND g.kind = 'snowflake'
                               AND g.slot = idgen.snowflake_worker(j.flake)
                               AND idgen.snowflake_time(j.flake) >= g.lo AND idgen.snowflake_time(j.flake) < g.hi)),
                           count(*) FILTER (WHERE NOT EXISTS (SELECT 1 FROM idgen.idgen_grants g
                             WHERE g.writer = 'java-portable' AND g.kind = 'xid12'
                               AND idgen.xid12_time(j.x) >= date_trunc('second', g.lo) AND idgen.xid12_time(j.x) < g.hi)),
                           count(DISTINCT flake), count(DISTINCT x)
                      FROM j""")) {
                rs.next();
                assertEquals(0, rs.getLong(1), "Snowflake ids outside the writer's windows");
                assertEquals(0, rs.getLong(2), "xid12 ids outside the writer's windows");
                assertEquals(1000, rs.getLong(3));
                assertEquals(1000, rs.getLong(4));
            }
            List<Xid> sorted = new ArrayList<>(xids);
            sorted.sort(null);
            assertEquals(xids, sorted);
            List<Xid> read = new ArrayList<>();
            try (ResultSet rs = s.executeQuery("SELECT x, extract(epoch FROM idgen.xid12_time(x))::bigint FROM j ORDER BY x")) {
                while (rs.next()) {
                    Xid x = XidJdbc.get(rs, 1);
                    assertEquals(x.unixSeconds(), rs.getLong(2));
                    read.add(x);
                }
            }
            assertEquals(sorted, read);
            assertTrue(read.size() == 1000);
        }
    }
}
