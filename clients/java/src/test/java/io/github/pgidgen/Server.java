package io.github.pgidgen;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;

/** The server tests' databases: PG_IDGEN_JAVA_URL (direct, a superuser) and PG_IDGEN_JAVA_BOUNCER_URL (PgBouncer, transaction mode). */
final class Server {
    private Server() {}

    static String url() {
        String u = System.getenv("PG_IDGEN_JAVA_URL");
        if (u == null) throw new IllegalStateException("PG_IDGEN_JAVA_URL is not set: run scripts/test_java.sh --server 18");
        return u;
    }

    static String bouncerUrl() {
        String u = System.getenv("PG_IDGEN_JAVA_BOUNCER_URL");
        if (u == null) throw new IllegalStateException("PG_IDGEN_JAVA_BOUNCER_URL is not set");
        return u;
    }

    /** The URL with another database name. */
    static String in(String url, String db) {
        return url.replaceFirst("/[^/?]*(\\?|$)", "/" + db + "$1");
    }

    static Connection connect(String url) throws SQLException {
        Properties p = new Properties();
        p.setProperty("user", "postgres");
        return DriverManager.getConnection(url, p);
    }

    /** A new database with the extension (dropped first when it exists). */
    static String freshDatabase(String name) throws SQLException {
        try (Connection c = connect(url()); Statement s = c.createStatement()) {
            s.execute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
            s.execute("CREATE DATABASE " + name);
        }
        try (Connection c = connect(in(url(), name)); Statement s = c.createStatement()) {
            s.execute("CREATE EXTENSION pg_idgen");
        }
        return name;
    }
}
