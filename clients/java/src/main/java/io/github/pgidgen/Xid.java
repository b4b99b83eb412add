package io.github.pgidgen;

import java.nio.charset.StandardCharsets;
import java.time.Instant;

/**
 * An xid12 value: 12 bytes, the layout of rs/xid (docs/formats.md §1, §2): unix seconds (4
 * bytes), machine id (3), process id (2), counter (3), all big-endian. Its text is 20 lowercase
 * base32hex characters; {@link #parse} takes either case, strictly (exactly what the server
 * takes). Ids compare in byte order, which is the order of their time, of their text and of the
 * server's btree. Immutable and thread-safe.
 */
public final class Xid implements Comparable<Xid>, java.io.Serializable {
    private static final long serialVersionUID = 1L;
    /** The number of bytes of an id. */
    public static final int BYTES = 12;
    /** The number of characters of its text. */
    public static final int CHARS = 20;
    public static final long MAX_TIME = 0xFFFFFFFFL;
    public static final int MAX_MACHINE = 0xFFFFFF;
    public static final int MAX_PID = 0xFFFF;
    public static final int MAX_COUNTER = 0xFFFFFF;
    private static final char[] ALPHABET = "0123456789abcdefghijklmnopqrstuv".toCharArray();
    private static final byte[] VALUE = new byte[128];

    static {
        java.util.Arrays.fill(VALUE, (byte) -1);
        for (int i = 0; i < 32; i++) {
            VALUE[ALPHABET[i]] = (byte) i;
            VALUE[Character.toUpperCase(ALPHABET[i])] = (byte) i;
        }
    }

    /** Bytes 0-7 as one big-endian long, bytes 8-11 as one big-endian int. */
    private final long hi;
    private final int lo;

    private Xid(long hi, int lo) {
        this.hi = hi;
        this.lo = lo;
    }

    /** The id of these fields (the generators' path: no checks). */
    static Xid ofFields(long time, int machine, int pid, int counter) {
        return new Xid(time << 32 | (long) machine << 8 | pid >>> 8, (pid & 0xFF) << 24 | (counter & MAX_COUNTER));
    }

    /**
     * The id of these parts (SQL xid12_from_parts): unix seconds 0 .. 4294967295, machine id 0 ..
     * 16777215, pid 0 .. 65535, counter 0 .. 16777215.
     */
    public static Xid fromParts(long unixSeconds, int machine, int pid, int counter) {
        if (unixSeconds < 0 || unixSeconds > MAX_TIME) {
            throw new PgIdgenException("timestamp out of range for xid12: unix second " + unixSeconds
                    + " is outside 1970-01-01 00:00:00 .. 2106-02-07 06:28:15 UTC", null);
        }
        if (machine < 0 || machine > MAX_MACHINE) {
            throw new PgIdgenException("xid12 machine id " + machine + " is outside the range 0 .. " + MAX_MACHINE, null);
        }
        if (pid < 0 || pid > MAX_PID) {
            throw new PgIdgenException("xid12 pid " + pid + " is outside the range 0 .. " + MAX_PID, null);
        }
        if (counter < 0 || counter > MAX_COUNTER) {
            throw new PgIdgenException("xid12 counter " + counter + " is outside the range 0 .. " + MAX_COUNTER, null);
        }
        return ofFields(unixSeconds, machine, pid, counter);
    }

    /** As {@link #fromParts(long, int, int, int)} with the machine id as its 3 bytes. */
    public static Xid fromParts(long unixSeconds, byte[] machine, int pid, int counter) {
        if (machine.length != 3) {
            throw new PgIdgenException("xid12 machine id must be 3 bytes, got " + machine.length, null);
        }
        return fromParts(unixSeconds, (machine[0] & 0xFF) << 16 | (machine[1] & 0xFF) << 8 | machine[2] & 0xFF, pid, counter);
    }

    /** The id of its 12 bytes (the binary wire form). */
    public static Xid fromBytes(byte[] b) {
        if (b.length != BYTES) {
            throw new PgIdgenException("invalid binary xid12 value", "An xid12 is exactly 12 bytes; got " + b.length + ".");
        }
        long h = 0;
        for (int i = 0; i < 8; i++) h = h << 8 | (b[i] & 0xFF);
        int l = 0;
        for (int i = 8; i < 12; i++) l = l << 8 | (b[i] & 0xFF);
        return new Xid(h, l);
    }

    /** The id of its text (20 base32hex characters, either case); PgIdgenException as the server says it. */
    public static Xid parse(CharSequence text) {
        if (text.length() == CHARS) {
            long h = 0;
            int bad = 0;
            for (int i = 0; i < 12; i++) {
                char c = text.charAt(i);
                int v = c < 128 ? VALUE[c] : -1;
                bad |= v;
                h = h << 5 | (v & 31);
            }
            long rest = 0;
            for (int i = 12; i < 20; i++) {
                char c = text.charAt(i);
                int v = c < 128 ? VALUE[c] : -1;
                bad |= v;
                rest = rest << 5 | (v & 31);
            }
            if (bad >= 0 && (rest & 0xF) == 0) {
                return new Xid(h << 4 | rest >>> 36, (int) (rest >>> 4));
            }
        }
        String s = text.toString();
        throw new PgIdgenException(Words.invalidInput("xid12", s), whyNotText(s));
    }

    private static boolean isSymbol(int cp) {
        return cp < 128 && VALUE[cp] >= 0;
    }

    /** The server's DETAIL for a text it refuses (tests/vectors/xid12.json). */
    private static String whyNotText(String text) {
        int bytes = text.getBytes(StandardCharsets.UTF_8).length;
        int chars = text.codePointCount(0, text.length());
        if (bytes == CHARS && text.codePoints().allMatch(Xid::isSymbol)) {
            return "The last character must be 0 or g: its low 4 bits are unused and must be zero.";
        }
        if (!Words.trim(text).equals(text)) return "Leading and trailing spaces are not allowed.";
        if (bytes != CHARS && chars != CHARS) {
            return "An xid12 is 20 base32hex characters; the text has " + chars + " characters.";
        }
        int[] cps = text.codePoints().toArray();
        int n = 0;
        while (n < cps.length && isSymbol(cps[n])) n++;
        return "Character " + (n + 1) + " is outside the base32hex alphabet 0-9, a-v.";
    }

    /** The 12 bytes (a new array). */
    public byte[] toBytes() {
        byte[] b = new byte[BYTES];
        for (int i = 0; i < 8; i++) b[i] = (byte) (hi >>> (56 - 8 * i));
        for (int i = 0; i < 4; i++) b[8 + i] = (byte) (lo >>> (24 - 8 * i));
        return b;
    }

    /** The canonical text: 20 lowercase base32hex characters. */
    @Override
    public String toString() {
        char[] out = new char[CHARS];
        for (int i = 0; i < 12; i++) out[i] = ALPHABET[(int) (hi >>> (59 - 5 * i)) & 31];
        long rest = (hi & 0xF) << 36 | (lo & 0xFFFFFFFFL) << 4;
        for (int j = 0; j < 8; j++) out[12 + j] = ALPHABET[(int) (rest >>> (35 - 5 * j)) & 31];
        return new String(out);
    }

    /** Unix seconds (SQL xid12_time). */
    public long unixSeconds() {
        return hi >>> 32;
    }

    public Instant time() {
        return Instant.ofEpochSecond(unixSeconds());
    }

    /** The machine id, 0 .. 16777215 (SQL xid12_machine gives its 3 bytes). */
    public int machine() {
        return (int) (hi >>> 8) & MAX_MACHINE;
    }

    /** The process id field, 0 .. 65535. */
    public int pid() {
        return (int) (hi & 0xFF) << 8 | lo >>> 24;
    }

    /** The counter, 0 .. 16777215. */
    public int counter() {
        return lo & MAX_COUNTER;
    }

    /** Byte order: unsigned, first byte first (the server's order). */
    @Override
    public int compareTo(Xid o) {
        int c = Long.compareUnsigned(hi, o.hi);
        return c != 0 ? c : Integer.compareUnsigned(lo, o.lo);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Xid && ((Xid) o).hi == hi && ((Xid) o).lo == lo;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(hi) * 31 + lo;
    }
}
