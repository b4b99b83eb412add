package io.github.pgidgen;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.nio.file.Files;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The words of the registry's errors (tests/vectors/registry_errors.json "words", the "message"
 * face): the jar carries that file, renders each template in the vectors' forms, and raises
 * each error with its words.
 */
@SuppressWarnings("unchecked")
class WordsTest {
    /** A template of registry_errors.json's words with its placeholders replaced by these texts (the test's own rendering). */
    static String expected(String name, Map<String, String> values) throws Exception {
        return expected("registry_errors.json", name, values);
    }

    /** The same from another vectors file's words (edge_traces.json). */
    static String expected(String file, String name, Map<String, String> values) throws Exception {
        for (Map<String, Object> w : (List<Map<String, Object>>) Vectors.read(file).get("words")) {
            if (!w.get("name").equals(name)) continue;
            String t = (String) w.get("message");
            for (Map.Entry<String, String> e : values.entrySet()) {
                t = t.replaceAll("\\{" + e.getKey() + "(:[a-z0-9]+)?\\}", java.util.regex.Matcher.quoteReplacement(e.getValue()));
            }
            assertTrue(!t.contains("{"), "a placeholder left in " + t);
            return t;
        }
        throw new AssertionError("no words named " + name);
    }

    @Test
    void theJarCarriesTheVectorsWords() throws Exception {
        for (String f : List.of("registry_errors.json", "edge_traces.json")) {
            try (InputStream in = RegistryWords.class.getResourceAsStream(f)) {
                assertArrayEquals(Files.readAllBytes(Vectors.dir().resolve(f)), in.readAllBytes(), f);
            }
        }
    }

    @Test
    void forms() throws Exception {
        Map<String, Object> forms = (Map<String, Object>) Vectors.read("registry_errors.json").get("forms");
        Map<String, Object> at = (Map<String, Object>) forms.get("at");
        assertEquals(at.get("message"), RegistryWords.form(Instant.ofEpochMilli(1800000000500L), "at"));
        for (String f : List.of("s", "s1", "s3")) {
            for (List<Object> ex : (List<List<Object>>) ((Map<String, Object>) forms.get(f)).get("examples_ms")) {
                assertEquals(ex.get(1), RegistryWords.form(ex.get(0), f), f + " " + ex);
            }
        }
        for (List<Object> ex : (List<List<Object>>) ((Map<String, Object>) forms.get("int")).get("examples")) {
            assertEquals(ex.get(1), RegistryWords.form(ex.get(0), "int"));
        }
    }

    @Test
    void everyWordWithAClassNamesOneOfThisClient() throws Exception {
        int n = 0;
        for (Map<String, Object> w : (List<Map<String, Object>>) Vectors.read("registry_errors.json").get("words")) {
            String cls = (String) w.get("class");
            if (w.get("message") == null || cls.contains(" ")) continue;
            String javaName = cls.equals("RegistryError") ? "RegistryException" : cls;
            Class<?> c = Class.forName("io.github.pgidgen." + javaName);
            assertTrue(RegistryException.class.isAssignableFrom(c), cls);
            assertTrue(RegistryWords.names().contains((String) w.get("name")));
            n++;
        }
        assertTrue(n >= 10, "only " + n + " words");
    }

    @Test
    void theClockErrorsSayTheirWords() throws Exception {
        SnowflakeGrantState s = new SnowflakeGrantState(1288834974657L, 5000);
        s.bind(5, 411165025343L, 411165625343L);
        ClockBeforeWindow e = assertThrows(ClockBeforeWindow.class, () -> s.step(1699999994000L));
        assertEquals(expected("clock_before_window", Map.of("behind", "6.0", "start", "2023-11-14T22:13:20.000Z",
                "kind", "snowflake", "slot", "5", "max_wait", "5")), e.getMessage());
        XidGrantState x = new XidGrantState(7, 0, 5);
        x.bind(66051, 1700000000L, 1700000600L);
        ClockBeforeWindow f = assertThrows(ClockBeforeWindow.class, () -> x.step(1699999990L));
        assertEquals(expected("clock_before_window", Map.of("behind", "10.0", "start", "2023-11-14T22:13:20.000Z",
                "kind", "xid12", "slot", "66051", "max_wait", "5")), f.getMessage());
    }

    @Test
    void aClosedRegistrySaysSo() throws Exception {
        Registry reg = new Registry(() -> {
            throw new java.sql.SQLException("unused", "08001");
        }, RegistryOptions.defaults());
        reg.close();
        assertEquals(expected("closed", Map.of()), assertThrows(RegistryException.class, reg::snowflake).getMessage());
    }
}
