package io.github.pgidgen;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.postgresql.PGStatement;
import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;

/**
 * The writer registry of one database (docs/registry.md): {@link #snowflake()} and
 * {@link #xid12()} give generators bound to grants of pg_idgen's registry (idgen_acquire,
 * idgen_renew, idgen_release), each renewed in the background at half its lease counted on the
 * server's clock; {@link #close()} releases them.
 *
 * <p>Connections: from a {@link DataSource} or a {@link ConnectionFactory} (a connection per
 * call, closed after it: give a pool), or {@link #connect(String, Properties, RegistryOptions)}
 * with a JDBC URL (one connection of its own, reopened when it breaks, with connect, socket and
 * login timeouts and TCP keepalives). Every call is one statement, sent unnamed
 * (prepareThreshold 0 on the statement), in autocommit, with no session state: a PgBouncer in
 * transaction mode in between is fine. Each statement is bounded by {@code timeout} (JDBC's
 * query timeout and the connection's network timeout); an id call at its window's end waits at
 * most {@code renewWait} for the renewal.
 */
public final class Registry implements AutoCloseable {
    /** Opens a connection (for example a pool's getConnection); closed after each call. */
    @FunctionalInterface
    public interface ConnectionFactory {
        Connection open() throws SQLException;
    }

    final RegistryOptions options;
    private final ConnectionFactory factory;
    private final boolean keep;
    private final Object connLock = new Object();
    private Connection kept;
    private volatile String schema;
    private volatile String edition;
    private final Set<GrantGenerator> generators = ConcurrentHashMap.newKeySet();
    final ScheduledExecutorService timers;
    private volatile boolean closed;

    private Registry(ConnectionFactory factory, boolean keep, RegistryOptions options) {
        this.factory = factory;
        this.keep = keep;
        this.options = options;
        ScheduledThreadPoolExecutor ex = new ScheduledThreadPoolExecutor(2, r -> {
            Thread t = new Thread(r, "pg-idgen-registry");
            t.setDaemon(true);
            return t;
        });
        ex.setRemoveOnCancelPolicy(true);
        this.timers = ex;
    }

    public Registry(DataSource ds, RegistryOptions options) {
        this(ds::getConnection, false, options);
    }

    public Registry(ConnectionFactory factory, RegistryOptions options) {
        this(factory, false, options);
    }

    /**
     * A Registry with a connection of its own to this JDBC URL. Unless {@code props} (or the
     * URL) sets them: connectTimeout and loginTimeout (the timeout, at least 2 s), socketTimeout
     * (the timeout plus 1 s), tcpKeepAlive, prepareThreshold 0.
     */
    public static Registry connect(String url, Properties props, RegistryOptions options) {
        Properties p = new Properties();
        long t = Math.max(2, (options.timeout.toMillis() + 999) / 1000);
        p.setProperty("connectTimeout", Long.toString(t));
        p.setProperty("loginTimeout", Long.toString(t));
        p.setProperty("socketTimeout", Long.toString(t + 1));
        p.setProperty("tcpKeepAlive", "true");
        p.setProperty("prepareThreshold", "0");
        if (props != null) p.putAll(props);
        return new Registry(() -> DriverManager.getConnection(url, p), true, options);
    }

    public static Registry connect(String url, RegistryOptions options) {
        return connect(url, null, options);
    }

    /** A Snowflake generator bound to a grant (acquired now) with the pool's default lease. */
    public GrantSnowflake snowflake() {
        return snowflake(null);
    }

    /** A Snowflake generator bound to a grant of this lease (null: the pool's default). */
    public GrantSnowflake snowflake(Duration lease) {
        return add(new GrantSnowflake(this, leaseText(lease)));
    }

    public GrantXid xid12() {
        return xid12(null);
    }

    /** An xid12 generator bound to a grant of this lease (null: the pool's default). */
    public GrantXid xid12(Duration lease) {
        return add(new GrantXid(this, leaseText(lease)));
    }

    /** "native" or "portable" (tests/vectors/edition_rule.sql), once a call has found it. */
    public String edition() {
        return edition;
    }

    public String writer() {
        return options.writer;
    }

    public boolean isClosed() {
        return closed;
    }

    static String leaseText(Duration lease) {
        if (lease == null) return null;
        if (lease.isNegative() || lease.isZero()) throw new IllegalArgumentException("a lease is positive");
        return lease.toMillis() / 1000.0 + " seconds";
    }

    private <G extends GrantGenerator> G add(G gen) {
        checkOpen();
        generators.add(gen);
        try {
            gen.start();
        } catch (RuntimeException e) {
            generators.remove(gen);
            throw e;
        }
        return gen;
    }

    void checkOpen() {
        if (closed) throw new RegistryException(RegistryWords.of("closed"));
    }

    /**
     * Releases every grant (each with the time of the last id made under it) and stops the
     * timers; closes its own connection. Errors reaching the registry are ignored, and releases
     * not done within the timeout are given up: a grant not released ends with its window.
     */
    @Override
    public void close() {
        if (closed) return;
        closed = true;
        long end = System.nanoTime() + options.timeout.toNanos();
        List<java.util.concurrent.Future<?>> releases = new ArrayList<>();
        for (GrantGenerator g : generators) {
            releases.add(timers.submit(() -> {
                try {
                    g.releaseNow();
                } catch (RuntimeException e) {
                    // ignored: the grant ends with its window
                }
            }));
        }
        for (java.util.concurrent.Future<?> f : releases) {
            try {
                f.get(Math.max(end - System.nanoTime(), 0), TimeUnit.NANOSECONDS);
            } catch (Exception e) {
                // given up
            }
        }
        for (GrantGenerator g : generators) g.stop();
        generators.clear();
        timers.shutdownNow();
        synchronized (connLock) {
            if (kept != null) {
                try {
                    kept.abort(Runnable::run);
                } catch (SQLException e) {
                    // closing anyway
                }
                kept = null;
            }
        }
    }

    void forget(GrantGenerator g) {
        generators.remove(g);
    }

    // ---- statements ----

    private static final String ROW = "grant_id, token, kind, slot, epoch_ms, lo_t, hi_t, server_time";

    private String sql(String name) {
        return statement(schema, name);
    }

    /**
     * The registry's statements on the extension's schema (unquoted), for the Registry and the
     * edge store: every name qualified, every parameter cast to the function argument's type.
     */
    static String statement(String schema, String name) {
        String s = Catalog.quoteIdent(schema);
        switch (name) {
            case "acquire": return "SELECT " + ROW + " FROM " + s + ".idgen_acquire(?::pg_catalog.text, ?::pg_catalog.text, "
                    + "?::pg_catalog.interval, ?::pg_catalog.text)";
            case "acquireDefault": return "SELECT " + ROW + " FROM " + s + ".idgen_acquire(?::pg_catalog.text, ?::pg_catalog.text, "
                    + "pool => ?::pg_catalog.text)";
            case "renew": return "SELECT " + ROW + " FROM " + s + ".idgen_renew(?::pg_catalog.int8, ?::pg_catalog.int8, "
                    + "?::pg_catalog.interval)";
            case "release": return "SELECT grant_id FROM " + s + ".idgen_release(?::pg_catalog.int8, ?::pg_catalog.int8, "
                    + "?::pg_catalog.timestamptz)";
            case "report": return "SELECT " + s + ".idgen_report(?::pg_catalog.int8, ?::pg_catalog.int8, ?::pg_catalog.text, "
                    + "?::pg_catalog.int8, ?::pg_catalog.timestamptz, ?::pg_catalog.int8)";
            default: throw new IllegalArgumentException(name);
        }
    }

    Grant acquire(String kind, String lease) {
        for (int attempt = 1;; attempt++) {
            checkOpen();
            try {
                return lease == null ? call("acquireDefault", kind, options.writer, options.pool)
                        : call("acquire", kind, options.writer, lease, options.pool);
            } catch (RegistryException e) {
                // 55P03: concurrent acquires took every candidate first ("try again")
                if (!"55P03".equals(e.sqlstate()) || attempt == 5) throw e;
            }
        }
    }

    Grant renew(Grant g, String lease) {
        checkOpen();
        return call("renew", g.grantId(), g.token(), lease);
    }

    void release(Grant g, String lastIdTime) {
        call("release", g.grantId(), g.token(), lastIdTime);
    }

    private Connection connection(long end) throws SQLException {
        if (!keep) return factory.open();
        synchronized (connLock) {
            if (kept == null || kept.isClosed()) kept = factory.open();
            return kept;
        }
    }

    private void dropConnection(Connection c) {
        if (keep) {
            synchronized (connLock) {
                if (kept == c) kept = null;
            }
        }
        try {
            c.abort(Runnable::run);
        } catch (SQLException | RuntimeException e) {
            // gone anyway
        }
    }

    /**
     * One statement; its row as a Grant (null for release). A connection problem is retried
     * once; the whole call takes at most the timeout, else RegistryUnavailable.
     */
    /**
     * One statement on a thread of its own, waited for at most the timeout (a driver or a
     * connection factory that hangs cannot hold the caller longer): then RegistryUnavailable,
     * and the call is abandoned (interrupted; its connection is dropped when it comes back).
     */
    private Grant call(String name, Object... params) {
        java.util.concurrent.Future<Grant> f;
        try {
            f = CALLERS.submit(() -> callNow(name, params));
        } catch (java.util.concurrent.RejectedExecutionException e) {
            throw new RegistryUnavailable(RegistryWords.of("unreachable", "cause", e.toString()), null, e);
        }
        try {
            return f.get(options.timeout.toNanos() + 250_000_000L, TimeUnit.NANOSECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            f.cancel(true);
            throw new RegistryUnavailable(RegistryWords.of("no_answer", "timeout", options.timeout.toMillis()), null, e);
        } catch (InterruptedException e) {
            f.cancel(true);
            Thread.currentThread().interrupt();
            throw new RegistryUnavailable("interrupted while waiting for the writer registry", null, e);
        } catch (java.util.concurrent.ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof RuntimeException) throw (RuntimeException) c;
            if (c instanceof Error) throw (Error) c;
            throw new RegistryException(c.toString(), null, c);
        }
    }

    /** The threads the statements run on: daemon threads, kept 30 s when idle. */
    private static final java.util.concurrent.ExecutorService CALLERS;

    static {
        java.util.concurrent.ThreadPoolExecutor ex = new java.util.concurrent.ThreadPoolExecutor(0, Integer.MAX_VALUE,
                30, TimeUnit.SECONDS, new java.util.concurrent.SynchronousQueue<>(), r -> {
                    Thread t = new Thread(r, "pg-idgen-registry-call");
                    t.setDaemon(true);
                    return t;
                });
        CALLERS = ex;
    }

    private Grant callNow(String name, Object... params) {
        long end = System.nanoTime() + options.timeout.toNanos();
        Exception last = null;
        for (int attempt = 1; attempt <= 2; attempt++) {
            Connection c = null;
            boolean broken = false;
            try {
                c = connection(end);
                if (!keep) return run(c, name, params, end);
                synchronized (c) {
                    return run(c, name, params, end);
                }
            } catch (SQLException e) {
                RegistryException mapped = mapped(e);
                if (mapped != null) throw mapped;
                last = e;
                broken = true;
                if (System.nanoTime() >= end) break;
            } finally {
                if (c != null && broken) dropConnection(c);
                else if (c != null && !keep) closeQuietly(c);
            }
        }
        if (last == null) throw new RegistryUnavailable(RegistryWords.of("no_answer", "timeout", options.timeout.toMillis()));
        throw new RegistryUnavailable(RegistryWords.of("unreachable", "cause", String.valueOf(last.getMessage())), null, last);
    }

    private static void closeQuietly(Connection c) {
        try {
            c.close();
        } catch (SQLException e) {
            // ignored
        }
    }

    /** The RegistryException of a server error; null for a connection problem (08xxx, 57Pxx, a cancel at our timeout, I/O). */
    static RegistryException mapped(SQLException e) {
        String state = e.getSQLState();
        if (state == null || state.startsWith("08") || state.startsWith("57P") || "57014".equals(state)) return null;
        String primary = e.getMessage();
        String detail = null;
        if (e instanceof PSQLException) {
            ServerErrorMessage m = ((PSQLException) e).getServerErrorMessage();
            if (m == null) return null; // raised by the driver, not the server
            primary = m.getMessage();
            detail = m.getDetail();
        }
        if ("42703".equals(state) && primary != null && primary.contains("lo_t")) {
            return new RegistryException(RegistryWords.of("needs_0_7_0", "message", primary), state, e);
        }
        String words = detail == null || detail.isEmpty()
                ? RegistryWords.of("server_refusal_no_detail", "message", primary, "sqlstate", state)
                : RegistryWords.of("server_refusal", "message", primary, "detail", detail, "sqlstate", state);
        return RegistryException.of(state, words, primary, e);
    }

    private Grant run(Connection c, String name, Object[] params, long end) throws SQLException {
        int previous = c.getNetworkTimeout();
        c.setNetworkTimeout(timers, (int) Math.max(left(end) / 1_000_000L + 1000, 1));
        try {
            if (schema == null) findSchema(c, end);
            try (PreparedStatement ps = c.prepareStatement(sql(name))) {
                unnamed(ps, end);
                for (int i = 0; i < params.length; i++) {
                    Object v = params[i];
                    if (v instanceof Long) ps.setLong(i + 1, (Long) v);
                    else ps.setString(i + 1, (String) v);
                }
                long sent = System.nanoTime();
                try (ResultSet rs = ps.executeQuery()) {
                    long rtt = System.nanoTime() - sent;
                    if (!c.getAutoCommit()) c.commit();
                    if (!rs.next()) throw new RegistryException("the writer registry answered no row");
                    if (name.equals("release")) return null;
                    long epoch = rs.getLong("epoch_ms");
                    Long epochMs = rs.wasNull() ? null : epoch;
                    OffsetDateTime server = rs.getObject("server_time", OffsetDateTime.class);
                    long serverUs = server.toEpochSecond() * 1_000_000L + server.getNano() / 1000;
                    return new Grant(rs.getLong("grant_id"), rs.getLong("token"), rs.getString("kind"), rs.getInt("slot"),
                            rs.getLong("lo_t"), rs.getLong("hi_t"), epochMs, serverUs, sent, rtt, options.clockMs.getAsLong());
                }
            }
        } finally {
            if (!c.isClosed()) c.setNetworkTimeout(timers, previous);
        }
    }

    private static long left(long end) {
        return Math.max(end - System.nanoTime(), 0);
    }

    private static void unnamed(PreparedStatement ps, long end) throws SQLException {
        if (ps.isWrapperFor(PGStatement.class)) ps.unwrap(PGStatement.class).setPrepareThreshold(0);
        ps.setQueryTimeout((int) Math.max((left(end) + 999_999_999L) / 1_000_000_000L, 1));
    }

    private void findSchema(Connection c, long end) throws SQLException {
        String[] found = Catalog.find(c, (int) Math.max((left(end) + 999_999_999L) / 1_000_000_000L, 1));
        if (!c.getAutoCommit()) c.commit();
        edition = found[0];
        schema = found[1];
    }
}
