package io.github.pgidgen;

import java.io.IOException;
import java.io.InputStream;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The words of the registry's, the generators' and the edge store's errors, read from the shared
 * vectors (tests/vectors/registry_errors.json and, named "edge." and their name,
 * edge_traces.json: "words", each error's "message" template, the face of clients without words
 * of their own), which the jar carries as resources. A template's
 * {name} is a text as it is; {name:form} a value in a form: at (an Instant, to the millisecond,
 * UTC), s, s1, s3 (seconds, from a value in milliseconds), int.
 */
final class RegistryWords {
    private static final Map<String, String> TEMPLATES = load();
    private static final Pattern PLACEHOLDER = Pattern.compile("\\{([a-z_]+)(?::([a-z0-9]+))?\\}");
    private static final DateTimeFormatter AT = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'", Locale.ROOT)
            .withZone(ZoneOffset.UTC);

    private RegistryWords() {}

    private static Map<String, String> load() {
        Map<String, String> out = new HashMap<>();
        load("registry_errors.json", "", out);
        load("edge_traces.json", "edge.", out);
        return out;
    }

    @SuppressWarnings("unchecked")
    private static void load(String resource, String prefix, Map<String, String> out) {
        try (InputStream in = RegistryWords.class.getResourceAsStream(resource)) {
            if (in == null) throw new IllegalStateException("pg-idgen: the resource " + resource + " is missing from the jar");
            Map<String, Object> v = (Map<String, Object>) Json.parse(new String(in.readAllBytes(), StandardCharsets.UTF_8));
            for (Map<String, Object> w : (List<Map<String, Object>>) v.get("words")) {
                if (w.get("message") != null) out.put(prefix + w.get("name"), (String) w.get("message"));
            }
        } catch (IOException e) {
            throw new IllegalStateException("pg-idgen: " + resource + " could not be read", e);
        }
    }

    /** The names with a message template. */
    static java.util.Set<String> names() {
        return TEMPLATES.keySet();
    }

    /** The words `name` says for these values: name, value, name, value, ... */
    static String of(String name, Object... values) {
        String t = TEMPLATES.get(name);
        if (t == null) throw new IllegalStateException("pg-idgen: no words named " + name + " in registry_errors.json or edge_traces.json");
        Map<String, Object> v = new HashMap<>();
        for (int i = 0; i < values.length; i += 2) v.put((String) values[i], values[i + 1]);
        Matcher m = PLACEHOLDER.matcher(t);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            if (!v.containsKey(m.group(1))) throw new IllegalArgumentException("words " + name + ": no value for " + m.group(1));
            m.appendReplacement(out, Matcher.quoteReplacement(form(v.get(m.group(1)), m.group(2))));
        }
        m.appendTail(out);
        return out.toString();
    }

    /** A value in a form (null: as it is). Seconds forms take milliseconds (a Number). */
    static String form(Object value, String form) {
        if (form == null) return String.valueOf(value);
        switch (form) {
            case "at": return AT.format(((Instant) value).truncatedTo(ChronoUnit.MILLIS));
            case "s": return seconds(value).stripTrailingZeros().toPlainString();
            case "s1": return String.format(Locale.ROOT, "%.1f", seconds(value).doubleValue());
            case "s3": return String.format(Locale.ROOT, "%.3f", seconds(value).doubleValue());
            case "int": return Long.toString(((Number) value).longValue());
            default: throw new IllegalArgumentException("unknown form " + form);
        }
    }

    private static BigDecimal seconds(Object ms) {
        BigDecimal d = ms instanceof Double || ms instanceof Float ? BigDecimal.valueOf(((Number) ms).doubleValue())
                : BigDecimal.valueOf(((Number) ms).longValue());
        return d.movePointLeft(3);
    }
}
