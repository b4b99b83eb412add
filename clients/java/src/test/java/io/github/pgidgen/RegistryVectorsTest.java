package io.github.pgidgen;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.file.Files;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;

/** tests/vectors/grant_traces.json, registry_errors.json and edition_rule.sql (edge_*.json: EdgeVectorsTest). */
@SuppressWarnings("unchecked")
class RegistryVectorsTest {
    /** Vector files this client has no runner for, each with the reason; any other file needs one. */
    private static final Map<String, String> NOT_HERE = Map.of(
            "generate.py", "the generator, not a vector",
            "README.md", "the vectors' description");
    private static final Set<String> RUN = Set.of("xid12.json", "rapkey.json", "snowflake.json", "grant_traces.json",
            "registry_errors.json", "edition_rule.sql", "edge_store.json", "edge_traces.json");

    @Test
    void everyVectorFileRunsOrSaysWhyNot() throws Exception {
        Set<String> files;
        try (var s = Files.list(Vectors.dir())) {
            files = s.map(p -> p.getFileName().toString()).collect(Collectors.toCollection(TreeSet::new));
        }
        for (String f : files) {
            assertTrue(RUN.contains(f) || NOT_HERE.containsKey(f), f + ": a vector file this client neither runs nor explains");
        }
        assertTrue(files.containsAll(RUN));
    }

    @Test
    void editionRule() throws Exception {
        String rule = Files.readAllLines(Vectors.dir().resolve("edition_rule.sql")).stream()
                .filter(l -> !l.startsWith("--")).collect(Collectors.joining("\n")).stripTrailing();
        assertEquals(2, rule.split("WITH c AS \\(", -1).length);
        assertTrue(Catalog.EDITION_QUERY.startsWith(rule), "EDITION_QUERY does not start with tests/vectors/edition_rule.sql");
    }

    @Test
    void registryErrors() throws Exception {
        Map<String, Object> v = Vectors.read("registry_errors.json");
        for (Map<String, Object> c : (List<Map<String, Object>>) v.get("conditions")) {
            String state = (String) c.get("sqlstate");
            RegistryException e = RegistryException.of(state, "m", "m", null);
            assertEquals(c.get("class"), e.getClass().getSimpleName(), c.toString());
            assertEquals(state, e.sqlstate());
            // through the driver: the server's error as pgjdbc gives it
            String text = "SERROR\0C" + state + "\0Mthe server's message\0Dits detail\0";
            RegistryException m = Registry.mapped(new PSQLException(new ServerErrorMessage(text)));
            assertEquals(c.get("class"), m.getClass().getSimpleName());
            assertEquals(WordsTest.expected("server_refusal", Map.of("message", "the server's message", "detail", "its detail",
                    "sqlstate", state)), m.getMessage());
            RegistryException bare = Registry.mapped(new PSQLException(new ServerErrorMessage("SERROR\0C" + state + "\0Mbare\0")));
            assertEquals(WordsTest.expected("server_refusal_no_detail", Map.of("message", "bare", "sqlstate", state)), bare.getMessage());
        }
        assertSame(RegistryException.class, RegistryException.of("XX000", "m", "m", null).getClass());
        assertNull(Registry.mapped(new PSQLException(new ServerErrorMessage("SFATAL\0C57P01\0Mterminating\0"))));
        assertNull(Registry.mapped(new PSQLException(new ServerErrorMessage("SFATAL\0C08006\0Mgone\0"))));
        for (Map<String, Object> c : (List<Map<String, Object>>) v.get("fenced_messages")) {
            String msg = (String) c.get("message");
            Instant want = c.get("until") == null ? null : Instant.parse((String) c.get("until"));
            assertEquals(want, RegistryFenced.untilOf(msg), msg);
            RegistryException e = Registry.mapped(new PSQLException(new ServerErrorMessage("SERROR\0CIG001\0M" + msg + "\0")));
            assertEquals(want, ((RegistryFenced) e).until());
        }
    }

    @Test
    void grantTraces() throws Exception {
        Map<String, Object> v = Vectors.read("grant_traces.json");
        List<Map<String, Object>> cases = (List<Map<String, Object>>) v.get("cases");
        assertTrue(cases.size() >= 10);
        for (Map<String, Object> c : cases) {
            if (c.get("kind").equals("snowflake")) snowflakeCase(c);
            else xidCase(c);
        }
    }

    private static int i(Object o) {
        return ((Long) o).intValue();
    }

    private static void snowflakeCase(Map<String, Object> c) {
        String name = (String) c.get("name");
        SnowflakeGrantState s = new SnowflakeGrantState((Long) c.get("epoch_ms"), (Long) c.get("max_wait"));
        s.bind(i(c.get("slot")), (Long) c.get("lo"), (Long) c.get("hi"));
        long last = -1;
        for (Map<String, Object> step : (List<Map<String, Object>>) c.get("steps")) {
            if (step.containsKey("rebind")) {
                Map<String, Object> r = (Map<String, Object>) step.get("rebind");
                s.bind(i(r.get("slot")), (Long) r.get("lo"), (Long) r.get("hi"));
                continue;
            }
            long now = (Long) step.get("now");
            int repeat = step.containsKey("repeat") ? i(step.get("repeat")) : 1;
            Map<String, Object> expect = (Map<String, Object>) step.get("expect");
            for (int k = 0; k < repeat; k++) {
                boolean lastCall = k == repeat - 1;
                GrantStep got;
                try {
                    got = s.step(now);
                } catch (ClockBeforeWindow e) {
                    assertTrue(lastCall && "clock_before_window".equals(expect.get("error")), name + ": " + e);
                    continue;
                } catch (SnowflakeClockException e) {
                    assertTrue(lastCall && "clock_moved_back".equals(expect.get("error")), name + ": " + e);
                    continue;
                }
                if (got == GrantStep.ID) {
                    assertEquals(s.slot, Snowflake.worker(s.id), name);
                    long t = Snowflake.msSinceEpoch(s.id);
                    assertTrue(t >= s.lo && t < s.hi, name + ": id outside the window");
                    assertTrue(s.id > last, name + ": not increasing");
                    last = s.id;
                } else if (!lastCall) {
                    fail(name + ": no id on a repeated call");
                }
                if (!lastCall) continue;
                if (expect.containsKey("id")) assertEquals(expect.get("id"), got == GrantStep.ID ? s.id : got, name);
                else if (expect.containsKey("wait_until")) {
                    assertEquals(GrantStep.WAIT, got, name);
                    assertEquals(expect.get("wait_until"), s.waitUntil, name);
                } else if (expect.containsKey("renew")) assertEquals(GrantStep.RENEW, got, name);
                else fail(name + ": expected " + expect + ", got " + got);
            }
        }
    }

    private static void xidCase(Map<String, Object> c) {
        String name = (String) c.get("name");
        HexFormat hex = HexFormat.of();
        XidGrantState s = new XidGrantState(i(c.get("pid")), 0, (Long) c.get("max_wait"));
        s.bind(i(c.get("slot")), (Long) c.get("lo"), (Long) c.get("hi"));
        Xid last = null;
        for (Map<String, Object> step : (List<Map<String, Object>>) c.get("steps")) {
            if (step.containsKey("rebind")) {
                Map<String, Object> r = (Map<String, Object>) step.get("rebind");
                s.bind(i(r.get("slot")), (Long) r.get("lo"), (Long) r.get("hi"));
                continue;
            }
            long now = (Long) step.get("now");
            int counter = i(step.get("counter"));
            int repeat = step.containsKey("repeat") ? i(step.get("repeat")) : 1;
            Map<String, Object> expect = (Map<String, Object>) step.get("expect");
            for (int k = 0; k < repeat; k++) {
                boolean lastCall = k == repeat - 1;
                s.counter = (counter + k) & Xid.MAX_COUNTER;
                GrantStep got;
                try {
                    got = s.step(now);
                } catch (ClockBeforeWindow e) {
                    assertTrue(lastCall && "clock_before_window".equals(expect.get("error")), name + ": " + e);
                    continue;
                }
                if (got == GrantStep.ID) {
                    assertEquals(s.slot, s.id.machine(), name);
                    assertTrue(s.id.unixSeconds() >= s.lo && s.id.unixSeconds() < s.hi, name + ": id outside the window");
                    assertTrue(last == null || s.id.compareTo(last) > 0, name + ": not increasing");
                    last = s.id;
                } else if (!lastCall) {
                    fail(name + ": no id on a repeated call");
                }
                if (!lastCall) continue;
                if (expect.containsKey("id")) {
                    assertEquals(GrantStep.ID, got, name);
                    assertEquals(expect.get("id"), hex.formatHex(s.id.toBytes()), name);
                } else if (expect.containsKey("wait_until")) {
                    assertEquals(GrantStep.WAIT, got, name);
                    assertEquals(expect.get("wait_until"), s.waitUntil, name);
                } else if (expect.containsKey("renew")) assertEquals(GrantStep.RENEW, got, name);
                else fail(name + ": expected " + expect + ", got " + got);
            }
        }
    }

    @Test
    void aClockErrorIsNotSwallowed() {
        SnowflakeGrantState s = new SnowflakeGrantState(0, 5000);
        s.bind(1, 10_000, 20_000);
        assertThrows(ClockBeforeWindow.class, () -> s.step(4_999));
    }
}
