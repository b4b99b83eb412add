// The pgjdbc recipe of pg_idgen's README ("From your application"), run against a real server
// by scripts/test_recipes.sh (pgjdbc connects over TCP only). The base URL, without
// parameters, is PG_IDGEN_JDBC_URL (e.g. jdbc:postgresql://127.0.0.1:5432/recipes); user and
// password are PGUSER and PGPASSWORD. Exits non-zero when a check fails.

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.OptionalInt;
import java.util.Properties;

public final class Xid12Recipe {
    static void check(boolean ok, String what) {
        if (!ok) {
            System.err.println("FAILED: " + what);
            System.exit(1);
        }
    }

    static Connection connect(String params) throws SQLException {
        Properties props = new Properties();
        props.setProperty("user", System.getenv().getOrDefault("PGUSER", "postgres"));
        String password = System.getenv("PGPASSWORD");
        if (password != null) props.setProperty("password", password);
        return DriverManager.getConnection(System.getenv("PG_IDGEN_JDBC_URL") + params, props);
    }

    static void execute(Connection conn, String sql) throws SQLException {
        try (Statement st = conn.createStatement()) {
            st.execute(sql);
        }
    }

    // --- recipe: begin ---
    // With stringtype=unspecified in the URL (jdbc:postgresql://host/db?stringtype=unspecified),
    // setString parameters are sent untyped: the server reads them as the type the query
    // needs, here xid12. Without it they are varchar, and xid12 = varchar does not exist.
    static OptionalInt orderN(Connection conn, String id) throws SQLException {
        try (PreparedStatement ps = conn.prepareStatement("SELECT n FROM orders WHERE id = ?")) {
            ps.setString(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? OptionalInt.of(rs.getInt("n")) : OptionalInt.empty();
            }
        }
    }
    // --- recipe: end ---

    // --- recipe: begin ---
    // On any connection: setObject(…, Types.OTHER) sends that one parameter untyped.
    // getString reads an id as its text.
    static String insertOrder(Connection conn, String id, int n) throws SQLException {
        try (PreparedStatement ps = conn.prepareStatement("INSERT INTO orders (id, n) VALUES (?, ?) RETURNING id")) {
            ps.setObject(1, id, Types.OTHER);
            ps.setInt(2, n);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getString("id");
            }
        }
    }

    // Several ids: bind a text[] and cast it to xid12[].
    static List<Integer> orderNs(Connection conn, String... ids) throws SQLException {
        try (PreparedStatement ps = conn.prepareStatement("SELECT n FROM orders WHERE id = ANY(?::xid12[]) ORDER BY id")) {
            ps.setArray(1, conn.createArrayOf("text", ids));
            List<Integer> found = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) found.add(rs.getInt("n"));
            }
            return found;
        }
    }

    // Keyset pagination: the first page (after == null) has no bound, each next page starts
    // after the last id of the one before.
    static List<String> pageOfIds(Connection conn, String after, int size) throws SQLException {
        String sql = after == null
                ? "SELECT id FROM orders ORDER BY id LIMIT ?"
                : "SELECT id FROM orders WHERE id > ? ORDER BY id LIMIT ?";
        try (PreparedStatement ps = conn.prepareStatement(sql)) {
            int i = 1;
            if (after != null) ps.setObject(i++, after, Types.OTHER);
            ps.setInt(i, size);
            List<String> ids = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) ids.add(rs.getString("id"));
            }
            return ids;
        }
    }
    // --- recipe: end ---

    public static void main(String[] args) throws Exception {
        String example = "9m4e2mr0ui3e8a215n4g"; // rs/xid's documented example id, bytes 4d88e15b60f486e428412dc9
        String fixture = "CREATE TEMP TABLE orders (id xid12 PRIMARY KEY DEFAULT gen_xid12(), n int NOT NULL);"
                + " INSERT INTO orders (id, n) SELECT gen_xid12(timestamptz '2026-01-01' + g * interval '1 minute'), g"
                + " FROM generate_series(1, 1000) g;"
                + " INSERT INTO orders (id, n) VALUES ('" + example + "', 5000)";

        // Plain setString binds varchar: there is no xid12 = varchar operator.
        try (Connection conn = connect("")) {
            execute(conn, fixture);
            SQLException failure = null;
            try {
                orderN(conn, example);
            } catch (SQLException e) {
                failure = e;
            }
            check(failure != null, "setString against xid12 worked without stringtype=unspecified");
            check("42883".equals(failure.getSQLState())
                    && failure.getMessage().contains("operator does not exist: xid12 = character varying"),
                    "unexpected error: " + failure.getSQLState() + " " + failure.getMessage());
            System.out.println("plain setString: " + failure.getMessage().lines().findFirst().orElse(""));
        }

        try (Connection conn = connect("?stringtype=unspecified")) {
            execute(conn, fixture);
            check(orderN(conn, example).equals(OptionalInt.of(5000)), "stringtype=unspecified: setString did not find the row");
            check(orderN(conn, "00000000000000000000").isEmpty(), "stringtype=unspecified: found a row that is not there");
        }

        try (Connection conn = connect("")) {
            execute(conn, fixture);
            String id = insertOrder(conn, "cv37img5tppgl4002kb0", 6000);
            List<Integer> found = orderNs(conn, id, "9m4e2mr0ui3e8a215n4g", "00000000000000000000");
            check("cv37img5tppgl4002kb0".equals(id), "RETURNING id gave " + id);
            check(found.equals(List.of(5000, 6000)), "ANY(?::xid12[]) found " + found);

            // Byte-exact both ways: rs/xid's example and 300 arbitrary 12-byte values.
            List<byte[]> samples = new ArrayList<>();
            samples.add(HexFormat.of().parseHex("4d88e15b60f486e428412dc9"));
            try (Statement st = conn.createStatement();
                 ResultSet rs = st.executeQuery("SELECT substr(decode(md5(g::text) || md5(g::text || 'x'), 'hex'), 1, 12)"
                         + " FROM generate_series(1, 300) g")) {
                while (rs.next()) samples.add(rs.getBytes(1));
            }
            try (PreparedStatement toText = conn.prepareStatement("SELECT ?::xid12");
                 PreparedStatement toBytes = conn.prepareStatement("SELECT ?::xid12::bytea")) {
                for (byte[] b : samples) {
                    toText.setBytes(1, b);
                    String text;
                    try (ResultSet rs = toText.executeQuery()) {
                        rs.next();
                        text = rs.getString(1);
                    }
                    check(text.matches("[0-9a-v]{19}[0g]"), "not an xid12 text: " + text);
                    toBytes.setObject(1, text, Types.OTHER);
                    try (ResultSet rs = toBytes.executeQuery()) {
                        rs.next();
                        check(Arrays.equals(rs.getBytes(1), b), "round trip of " + text);
                    }
                }
                check(samples.size() == 301, "samples");
            }
            try (PreparedStatement ps = conn.prepareStatement("SELECT ?::xid12")) {
                ps.setBytes(1, samples.get(0));
                try (ResultSet rs = ps.executeQuery()) {
                    check(rs.next() && example.equals(rs.getString(1)), "rs/xid's example is not " + example);
                }
            }
            System.out.println("byte-exact round trip: " + samples.size() + " ids");

            List<String> all = new ArrayList<>();
            try (Statement st = conn.createStatement(); ResultSet rs = st.executeQuery("SELECT id FROM orders ORDER BY id")) {
                while (rs.next()) all.add(rs.getString(1));
            }
            List<String> paged = new ArrayList<>();
            for (List<String> page = pageOfIds(conn, null, 100); !page.isEmpty();
                    page = pageOfIds(conn, page.get(page.size() - 1), 100)) {
                paged.addAll(page);
            }
            check(paged.equals(all) && paged.size() == 1002, "pagination returned " + paged.size() + " ids");
            for (int i = 1; i < paged.size(); i++) {
                check(paged.get(i - 1).compareTo(paged.get(i)) < 0, "string order differs from id order");
            }
            System.out.println("pagination: " + paged.size() + " ids in pages of 100, in the server's order");

            // A malformed id is the server's error, never a different id.
            try (PreparedStatement ps = conn.prepareStatement("SELECT ?::xid12")) {
                ps.setObject(1, "9m4e2mr0ui3e8a215n4h", Types.OTHER);
                ps.executeQuery().close();
                check(false, "a malformed id was accepted");
            } catch (SQLException e) {
                check("22P02".equals(e.getSQLState()), "malformed id: " + e.getSQLState() + " " + e.getMessage());
            }
        }
        System.out.println("pgjdbc recipe: all checks passed");
    }
}
