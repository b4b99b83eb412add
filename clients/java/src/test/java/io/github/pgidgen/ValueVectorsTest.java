package io.github.pgidgen;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** tests/vectors/xid12.json, rapkey.json and snowflake.json: the server's answers, the same here. */
@SuppressWarnings("unchecked")
class ValueVectorsTest {
    private static List<Map<String, Object>> cases(Map<String, Object> v, String key) {
        return (List<Map<String, Object>>) v.get(key);
    }

    private static void sameError(Map<String, Object> c, PgIdgenException e) {
        assertEquals(c.get("message"), e.primaryMessage(), c.toString());
        assertEquals(c.get("detail"), e.detail(), c.toString());
        assertEquals(Words.oneLine((String) c.get("message"), (String) c.get("detail")), e.getMessage());
    }

    @Test
    void xid12() throws Exception {
        Map<String, Object> v = Vectors.read("xid12.json");
        HexFormat hex = HexFormat.of();
        for (Map<String, Object> c : cases(v, "valid")) {
            Xid x = Xid.parse((String) c.get("input"));
            assertEquals(c.get("text"), x.toString());
            assertEquals(c.get("bytes"), hex.formatHex(x.toBytes()));
            assertEquals(x, Xid.fromBytes(hex.parseHex((String) c.get("bytes"))));
            assertEquals(c.get("unix_seconds"), x.unixSeconds());
            assertEquals(Integer.parseInt((String) c.get("machine"), 16), x.machine());
            assertEquals(((Long) c.get("pid")).intValue(), x.pid());
            assertEquals(((Long) c.get("counter")).intValue(), x.counter());
        }
        assertTrue(cases(v, "invalid_text").size() > 10);
        for (Map<String, Object> c : cases(v, "invalid_text")) {
            sameError(c, assertThrows(PgIdgenException.class, () -> Xid.parse((String) c.get("text")), c.toString()));
        }
        for (Map<String, Object> c : cases(v, "invalid_bytes")) {
            sameError(c, assertThrows(PgIdgenException.class, () -> Xid.fromBytes(hex.parseHex((String) c.get("bytes")))));
        }
        for (Map<String, Object> c : cases(v, "parts")) {
            long t = (Long) c.get("unix_seconds");
            byte[] machine = hex.parseHex((String) c.get("machine"));
            int pid = ((Long) c.get("pid")).intValue();
            int counter = ((Long) c.get("counter")).intValue();
            if (c.containsKey("text")) {
                assertEquals(c.get("text"), Xid.fromParts(t, machine, pid, counter).toString());
            } else {
                sameError(c, assertThrows(PgIdgenException.class, () -> Xid.fromParts(t, machine, pid, counter)));
            }
        }
    }

    @Test
    void xidOrderIsByteOrder() {
        java.util.Random r = new java.util.Random(46);
        for (int n = 0; n < 10_000; n++) {
            byte[] a = new byte[12];
            byte[] b = new byte[12];
            r.nextBytes(a);
            r.nextBytes(b);
            if (n % 3 == 0) System.arraycopy(a, 0, b, 0, 1 + r.nextInt(11));
            Xid x = Xid.fromBytes(a);
            Xid y = Xid.fromBytes(b);
            assertEquals(Integer.signum(java.util.Arrays.compareUnsigned(a, b)), Integer.signum(x.compareTo(y)));
            assertEquals(Integer.signum(x.toString().compareTo(y.toString())), Integer.signum(x.compareTo(y)));
            assertArrayEquals(a, Xid.parse(x.toString().toUpperCase()).toBytes());
        }
    }

    @Test
    void rapkey() throws Exception {
        Map<String, Object> v = Vectors.read("rapkey.json");
        for (Map<String, Object> c : cases(v, "valid")) {
            String body = (String) c.get("body");
            assertEquals(((String) c.get("check")).charAt(0), Rapkey.checkChar(body));
            String key = (String) c.get("key");
            assertEquals(key, Rapkey.validate(key));
            assertTrue(Rapkey.isValid(key));
            Rapkey.Parts p = Rapkey.parse(key);
            assertEquals(key, Rapkey.build(p.type(), p.segments().toArray(new String[0])));
        }
        for (Map<String, Object> c : cases(v, "invalid_bodies")) {
            sameError(c, assertThrows(RapkeyException.class, () -> Rapkey.checkChar((String) c.get("body")), c.toString()));
        }
        for (Map<String, Object> c : cases(v, "invalid_keys")) {
            String key = (String) c.get("key");
            sameError(c, assertThrows(RapkeyException.class, () -> Rapkey.parse(key), c.toString()));
            assertFalse(Rapkey.isValid(key));
        }
        for (Map<String, Object> c : cases(v, "normalize")) {
            String in = (String) c.get("input");
            if (c.containsKey("key")) assertEquals(c.get("key"), Rapkey.normalize(in));
            else sameError(c, assertThrows(RapkeyException.class, () -> Rapkey.normalize(in), c.toString()));
        }
        for (Map<String, Object> c : cases(v, "build")) {
            String type = (String) c.get("type");
            String[] segs = ((List<String>) c.get("segments")).toArray(new String[0]);
            if (c.containsKey("key")) assertEquals(c.get("key"), Rapkey.build(type, segs));
            else sameError(c, assertThrows(RapkeyException.class, () -> Rapkey.build(type, segs), c.toString()));
        }
        for (Map<String, Object> c : cases(v, "prefix_range")) {
            String p = (String) c.get("prefix");
            if (c.containsKey("range")) assertEquals(c.get("range"), List.of(Rapkey.prefixRange(p)));
            else sameError(c, assertThrows(RapkeyException.class, () -> Rapkey.prefixRange(p), c.toString()));
        }
    }

    @Test
    void rapkeyCatchesEverySubstitutionAndTransposition() {
        String key = "usr.cn.10001-x";
        String alphabet = "0123456789abcdefghijklmnopqrstuvwxyz.";
        for (int i = 0; i < key.length(); i++) {
            if (key.charAt(i) == '-') continue;
            for (char c : (alphabet + "~").toCharArray()) {
                if (c == key.charAt(i)) continue;
                String bad = key.substring(0, i) + c + key.substring(i + 1);
                assertFalse(Rapkey.isValid(bad), bad);
            }
        }
    }

    @Test
    void snowflake() throws Exception {
        Map<String, Object> v = Vectors.read("snowflake.json");
        long epoch = Long.parseLong((String) v.get("epoch"));
        assertEquals(Snowflake.DEFAULT_EPOCH_MS, epoch);
        for (Map<String, Object> c : cases(v, "layouts")) {
            long id = (Long) c.get("id");
            assertEquals(c.get("ms_since_epoch"), Snowflake.msSinceEpoch(id));
            assertEquals(c.get("unix_ms"), Snowflake.unixMs(id, epoch));
            assertEquals(((Long) c.get("worker")).intValue(), Snowflake.worker(id));
            assertEquals(((Long) c.get("sequence")).intValue(), Snowflake.sequence(id));
            assertEquals(id, Snowflake.fromParts(Snowflake.msSinceEpoch(id), Snowflake.worker(id), Snowflake.sequence(id)));
        }
        for (Map<String, Object> c : cases(v, "invalid_ids")) {
            sameError(c, assertThrows(PgIdgenException.class, () -> Snowflake.worker((Long) c.get("id"))));
        }
    }
}
