package io.github.pgidgen;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * RAP semantic keys such as {@code ord.cn.sh.202407.8842-2}, with the server's rules
 * (docs/formats.md §3, §4): a type of 2-8 letters [a-z], 1 to 5 segments of 1-32 characters
 * [a-z0-9], at most 128 characters in all, then '-' and one Damm check character over the body
 * (the quasigroup x ∘ y = 2·(x − y) mod 37 on 0-9, a-z and '.'; check characters 0-9a-z~).
 * {@link #build}, {@link #normalize} and {@link #prefixRange} trim and lowercase their input;
 * the others take the text as it is. Errors: {@link RapkeyException}, the server's words.
 */
public final class Rapkey {
    public static final int MAX_KEY_LEN = 128;
    public static final int MAX_BODY_LEN = MAX_KEY_LEN - 2;
    public static final int MAX_SEGMENTS = 5;
    public static final int MIN_TYPE_LEN = 2;
    public static final int MAX_TYPE_LEN = 8;
    public static final int MAX_SEGMENT_LEN = 32;
    public static final String CHECK_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz~";

    private Rapkey() {}

    /** A key's type, segments and check character. */
    public record Parts(String type, List<String> segments, char check) {}

    /** Why a text is refused (the DETAIL), before the caller names what it was reading. */
    private static final class Why extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final boolean checksum;
        final char expected;

        Why(String detail) {
            this(detail, false, '\0');
        }

        Why(String detail, boolean checksum, char expected) {
            super(detail, null, false, false);
            this.checksum = checksum;
            this.expected = expected;
        }
    }

    private static int value(char c) {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'z') return c - 'a' + 10;
        return 36; // '.': bodies reaching here hold nothing else
    }

    private static int interim(String body) {
        int i = 0;
        for (int k = 0; k < body.length(); k++) i = Math.floorMod(2 * (i - value(body.charAt(k))), 37);
        return i;
    }

    private static int len(String s) {
        return s.codePointCount(0, s.length());
    }

    private static void checkType(String lower, String orig) {
        int[] cps = lower.codePoints().toArray();
        int[] o = orig.codePoints().toArray();
        for (int n = 0; n < cps.length; n++) {
            if (!(cps[n] >= 'a' && cps[n] <= 'z')) {
                throw new Why("Type " + Words.quoted(orig) + " has a character outside [a-z]: " + Words.shownChar(o[n])
                        + " at position " + (n + 1) + ".");
            }
        }
        int n = cps.length;
        if (n == 0) throw new Why("Type is empty.");
        if (n < MIN_TYPE_LEN || n > MAX_TYPE_LEN) {
            throw new Why("Type " + Words.quoted(orig) + " is too " + (n < MIN_TYPE_LEN ? "short" : "long") + ": " + n
                    + " letter" + (n == 1 ? "" : "s") + " (a type has " + MIN_TYPE_LEN + " to " + MAX_TYPE_LEN + " letters).");
        }
    }

    private static void checkSegment(int index, String lower, String orig) {
        if (lower.isEmpty()) throw new Why("Segment " + index + " is empty.");
        int[] cps = lower.codePoints().toArray();
        int[] o = orig.codePoints().toArray();
        for (int n = 0; n < cps.length; n++) {
            int c = cps[n];
            if (!(c >= 'a' && c <= 'z' || c >= '0' && c <= '9')) {
                throw new Why("Segment " + index + " " + Words.quoted(orig) + " has a character outside [a-z0-9]: "
                        + Words.shownChar(o[n]) + " at position " + (n + 1) + ".");
            }
        }
        if (cps.length > MAX_SEGMENT_LEN) {
            throw new Why("Segment " + index + " " + Words.quoted(orig) + " is too long: " + cps.length
                    + " characters (at most " + MAX_SEGMENT_LEN + ").");
        }
    }

    private static void checkBody(String body, boolean needSegment) {
        String[] parts = body.split("\\.", -1);
        checkType(parts[0], parts[0]);
        int segments = parts.length - 1;
        for (int i = 1; i < parts.length; i++) {
            if (i > MAX_SEGMENTS) throw new Why("Too many segments: " + segments + " (at most " + MAX_SEGMENTS + ").");
            checkSegment(i, parts[i], parts[i]);
        }
        if (segments == 0 && needSegment) {
            throw new Why("Type " + Words.quoted(parts[0]) + " must be followed by at least one segment.");
        }
    }

    private static Why bodyTooLong(int n) {
        return new Why("Body is too long: " + n + " characters (at most " + MAX_BODY_LEN
                + ", leaving room for '-' and the check character).");
    }

    private static RapkeyException fail(String message, Why why) {
        return new RapkeyException(message, why.getMessage(), why.checksum, why.expected);
    }

    /** The check character of a body ({@code type.seg…}, lowercase, without {@code -c}). */
    public static char checkChar(String body) {
        try {
            if (len(body) > MAX_BODY_LEN) throw bodyTooLong(len(body));
            checkBody(body, true);
            return CHECK_ALPHABET.charAt(interim(body));
        } catch (Why w) {
            throw fail("invalid rapkey body", w);
        }
    }

    private static Parts parseKey(String key) {
        if (key.isEmpty()) throw new Why("Key is empty.");
        int n = len(key);
        if (n > MAX_KEY_LEN) throw new Why("Key is too long: " + n + " characters (at most " + MAX_KEY_LEN + ").");
        int dash = key.lastIndexOf('-');
        if (dash < 0) throw new Why("Missing '-' before the check character.");
        String body = key.substring(0, dash);
        String check = key.substring(dash + 1);
        checkBody(body, true);
        if (check.isEmpty()) throw new Why("Missing check character after '-'.");
        if (len(check) > 1) throw new Why("Expected one check character after '-', found " + Words.quoted(check) + ".");
        int v = CHECK_ALPHABET.indexOf(check);
        if (v < 0) throw new Why("Check character " + Words.shownChar(check.codePointAt(0)) + " is not one of [0-9a-z~].");
        int i = interim(body);
        if (Math.floorMod(2 * (i - v), 37) != 0) {
            char expected = CHECK_ALPHABET.charAt(i);
            throw new Why("Wrong check character: expected '" + expected + "', found '" + check + "'.", true, expected);
        }
        String[] parts = body.split("\\.", -1);
        return new Parts(parts[0], List.of(Arrays.copyOfRange(parts, 1, parts.length)), check.charAt(0));
    }

    /** Validates a canonical key and returns its type, segments and check character. */
    public static Parts parse(String key) {
        try {
            return parseKey(key);
        } catch (Why w) {
            throw fail(Words.invalidInput("rapkey", key), w);
        }
    }

    /** The key when it is valid; RapkeyException saying why not otherwise. */
    public static String validate(String key) {
        parse(key);
        return key;
    }

    /** Whether the server's rapkey_is_valid is true for {@code key}; never throws. */
    public static boolean isValid(String key) {
        if (key == null) return false;
        try {
            parseKey(key);
            return true;
        } catch (Why w) {
            return false;
        }
    }

    /** A key from a type and 1 to 5 segments (SQL rapkey_build), each part trimmed and lowercased. */
    public static String build(String type, String... segments) {
        try {
            String typeOrig = Words.trim(type);
            String typeLower = Words.lowerAscii(typeOrig);
            checkType(typeLower, typeOrig);
            if (segments.length > MAX_SEGMENTS) {
                throw new Why("Too many segments: " + segments.length + " (at most " + MAX_SEGMENTS + ").");
            }
            if (segments.length == 0) {
                throw new Why("Type " + Words.quoted(typeLower) + " must be followed by at least one segment.");
            }
            List<String> body = new ArrayList<>();
            body.add(typeLower);
            for (int i = 0; i < segments.length; i++) {
                String orig = Words.trim(segments[i]);
                String lower = Words.lowerAscii(orig);
                checkSegment(i + 1, lower, orig);
                body.add(lower);
            }
            String joined = String.join(".", body);
            if (joined.length() > MAX_BODY_LEN) throw bodyTooLong(joined.length());
            return joined + "-" + CHECK_ALPHABET.charAt(interim(joined));
        } catch (Why w) {
            throw fail("invalid rapkey part", w);
        }
    }

    /** The canonical form of user input (SQL to_rapkey): trimmed, lowercased, validated. */
    public static String normalize(String text) {
        try {
            String key = Words.lowerAscii(Words.trim(text));
            parseKey(key);
            return key;
        } catch (Why w) {
            throw fail(Words.invalidInput("rapkey", text), w);
        }
    }

    /**
     * The half-open range [lo, hi) of the valid keys under a prefix (whole parts), in the "C"
     * collation (SQL rapkey_prefix_lo/hi).
     */
    public static String[] prefixRange(String prefix) {
        try {
            String p = Words.lowerAscii(Words.trim(prefix));
            checkBody(p, false);
            if (p.length() > MAX_BODY_LEN) throw bodyTooLong(p.length());
            return new String[] {p + "-", p + "/"};
        } catch (Why w) {
            throw fail("invalid rapkey prefix", w);
        }
    }
}
