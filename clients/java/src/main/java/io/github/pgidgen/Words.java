package io.github.pgidgen;

/**
 * The words of value errors, shared with the server and the other clients
 * (crates/idgen-core/src/words.rs, tests/vectors/README.md): an error is the server's message,
 * then ": " and its DETAIL when there is one. Values are quoted by one rule, characters shown by
 * another. Counts are in code points.
 */
final class Words {
    static final int QUOTED_CHARS = 40;

    private Words() {}

    /** {@code "value"}, or past 40 characters {@code "<the first 40>..." (N characters)}. */
    static String quoted(String value) {
        int n = value.codePointCount(0, value.length());
        if (n <= QUOTED_CHARS) return "\"" + value + "\"";
        int end = value.offsetByCodePoints(0, QUOTED_CHARS);
        return "\"" + value.substring(0, end) + "...\" (" + n + " characters)";
    }

    /** A character in single quotes; a control character escaped ({@code '\\u{a}'}). */
    static String shownChar(int cp) {
        if (Character.getType(cp) == Character.CONTROL) return "'\\u{" + Integer.toHexString(cp) + "}'";
        return "'" + new String(Character.toChars(cp)) + "'";
    }

    static String invalidInput(String typeName, String input) {
        return "invalid input syntax for type " + typeName + ": " + quoted(input);
    }

    static String oneLine(String message, String detail) {
        return detail == null ? message : message + ": " + detail;
    }

    /** Unicode White_Space: what the server's trim takes away (Rust's str::trim). */
    static boolean isWhite(int cp) {
        switch (cp) {
            case 0x09: case 0x0a: case 0x0b: case 0x0c: case 0x0d: case 0x20: case 0x85: case 0xa0:
            case 0x1680: case 0x2028: case 0x2029: case 0x202f: case 0x205f: case 0x3000:
                return true;
            default:
                return cp >= 0x2000 && cp <= 0x200a;
        }
    }

    static String trim(String s) {
        int a = 0;
        int b = s.length();
        while (a < b && isWhite(s.codePointAt(a))) a += Character.charCount(s.codePointAt(a));
        while (b > a && isWhite(s.codePointBefore(b))) b -= Character.charCount(s.codePointBefore(b));
        return s.substring(a, b);
    }

    /** ASCII lowercase only (the server's rule): other characters stay as they are. */
    static String lowerAscii(String s) {
        StringBuilder out = null;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c >= 'A' && c <= 'Z') {
                if (out == null) out = new StringBuilder(s);
                out.setCharAt(i, (char) (c + 32));
            }
        }
        return out == null ? s : out.toString();
    }
}
