package io.github.pgidgen;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;
import org.postgresql.PGStatement;
import org.postgresql.core.BaseConnection;
import org.postgresql.core.TransactionState;
import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;

/**
 * The grant of one edge device, of one kind ("xid12", recommended, or "snowflake"), kept in the
 * device's own SQLite file (docs/registry.md "Edge devices", docs/formats.md §10): the table
 * {@code pg_idgen_edge} of tests/vectors/edge_store.json, the same as the Go, Python and Rust
 * clients' edge stores, so a file one of them wrote, another reads.
 *
 * <p>{@link #enrol} takes a grant of the registry's 'edge' pool (weeks long) and keeps it in the
 * file; {@link #nextXid()} / {@link #nextSnowflake()} make the next id offline, inside its
 * window, above the stored mark, and write the new mark on the SQLite connection: in autocommit it
 * commits at once; with autocommit off it belongs to the caller's transaction, so the row the id
 * keys commits with it (a device killed mid-batch never repeats a committed id). Outside the
 * window no id is made. {@link #sync} reports to the registry (idgen_report, which finds a copy of
 * the file used on a second device) and renews or releases the grant. Thread-safe: the calls on
 * one SQLite connection run one at a time, and a second connection to the file (another process)
 * never reuses a mark (each new mark is a compare-and-set).
 *
 * <p>Refusals: {@link DeviceConflict} (the registry found this state on another device; from then
 * on no id is made), {@link ClockBeforeWindow} (the clock before the window: offline there is no
 * waiting), {@link ClockAheadOfWindow} (the clock at or past the window's end, or its ids used
 * up: sync), {@link RegistryException} for the rest; the registry's refusals at enrol and sync
 * as {@link Registry}'s. Failures of SQLite are its SQLException.
 */
public final class EdgeStore {
    /** tests/vectors/edge_store.json's "table", character for character. */
    static final String TABLE = """

            CREATE TABLE IF NOT EXISTS pg_idgen_edge (
                kind text PRIMARY KEY CHECK (kind IN ('xid12', 'snowflake')),
                grant_id integer NOT NULL,
                token integer NOT NULL,
                slot integer NOT NULL,
                lo_us integer NOT NULL,  -- the window [lo, hi) in unix microseconds
                hi_us integer NOT NULL,
                epoch_ms integer,        -- the Snowflake epoch of the grant; NULL for xid12
                writer text NOT NULL,
                syncs integer NOT NULL DEFAULT 0,  -- the count the registry gave at the last report
                last_id,                 -- the high-water mark: the last id made (xid12 text, Snowflake int)
                last_id_us integer,      -- its id-time in unix microseconds
                cloned text,             -- set when the registry found this state on another device
                attempt integer          -- the number of the report being sent, kept until its reply arrives
            )""";
    /** Its "columns" and "enrol". */
    static final String COLUMNS = "grant_id, token, slot, lo_us, hi_us, epoch_ms, writer, syncs, last_id, last_id_us, cloned, attempt";
    static final String ENROL = "INSERT INTO pg_idgen_edge (kind, grant_id, token, slot, lo_us, hi_us, epoch_ms, writer) "
            + "VALUES (?, ?, ?, ?, ?, ?, ?, ?)";
    /** The lease of enrol and sync unless given: 28 days (the chain of 4 × 7 days as one window). */
    public static final Duration LEASE = Duration.ofDays(28);

    private final Connection db;
    private final String kind;
    private final String device;
    private final LongSupplier clockUs;
    /** What an xid12 id with no mark takes: the process id's low 16 bits, a random counter (a test seam). */
    IntSupplier pid = XidGenerator::defaultPid;
    IntSupplier counter = () -> ThreadLocalRandom.current().nextInt(Xid.MAX_COUNTER + 1);

    private record Row(long grantId, long token, int slot, long loUs, long hiUs, Long epochMs, String writer, long syncs,
            Object lastId, Long lastUs, String cloned, Long attempt) {
    }

    /** The store of this kind in {@code sqlite}'s database, this device named by {@link #defaultDevice()}. */
    public EdgeStore(Connection sqlite, String kind) throws SQLException {
        this(sqlite, kind, null, null);
    }

    /**
     * The store of this kind in {@code sqlite}'s database (the table is created when missing).
     * {@code device} names this device in the registry's reports and in errors (null: the
     * default); {@code clockUs} gives unix µs (null: the system's clock; tests give their own).
     */
    public EdgeStore(Connection sqlite, String kind, String device, LongSupplier clockUs) throws SQLException {
        if (!"xid12".equals(kind) && !"snowflake".equals(kind)) {
            throw new IllegalArgumentException("an edge store's kind is 'xid12' or 'snowflake', not '" + kind + "'");
        }
        this.db = sqlite;
        this.kind = kind;
        this.device = device != null ? device : defaultDevice();
        this.clockUs = clockUs != null ? clockUs : () -> ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now());
        synchronized (db) {
            try (Statement s = db.createStatement()) {
                s.execute(TABLE);
            }
        }
    }

    /** The host name, and /etc/machine-id when it can be read (the Python client's default too). */
    public static String defaultDevice() {
        String host;
        try {
            host = java.net.InetAddress.getLocalHost().getHostName();
        } catch (java.io.IOException e) {
            host = "localhost";
        }
        try {
            String machine = Files.readString(Path.of("/etc/machine-id")).strip();
            return machine.isEmpty() ? host : host + " (machine-id " + machine.substring(0, Math.min(32, machine.length())) + ")";
        } catch (java.io.IOException e) {
            return host;
        }
    }

    public String kind() {
        return kind;
    }

    public String device() {
        return device;
    }

    // ---- the file ----

    private Row row() throws SQLException {
        try (PreparedStatement ps = db.prepareStatement("SELECT " + COLUMNS + " FROM pg_idgen_edge WHERE kind = ?")) {
            ps.setString(1, kind);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) return null;
                Object last = rs.getObject(9);
                if (last instanceof Number n) last = n.longValue();
                return new Row(rs.getLong(1), rs.getLong(2), rs.getInt(3), rs.getLong(4), rs.getLong(5), orNull(rs, 6),
                        rs.getString(7), rs.getLong(8), last, orNull(rs, 10), rs.getString(11), orNull(rs, 12));
            }
        }
    }

    private static Long orNull(ResultSet rs, int i) throws SQLException {
        long v = rs.getLong(i);
        return rs.wasNull() ? null : v;
    }

    private int update(String sql, Object... params) throws SQLException {
        try (PreparedStatement ps = db.prepareStatement(sql)) {
            for (int i = 0; i < params.length; i++) ps.setObject(i + 1, params[i]);
            return ps.executeUpdate();
        }
    }

    private static Instant at(long us) {
        return Instant.EPOCH.plus(us, ChronoUnit.MICROS);
    }

    /** The grant this store holds; null before enrol and after a releasing sync. */
    public EdgeGrant grant() throws SQLException {
        Row r;
        synchronized (db) {
            r = row();
        }
        if (r == null) return null;
        Object last = r.lastId == null || kind.equals("snowflake") ? r.lastId : Xid.parse((String) r.lastId);
        return new EdgeGrant(r.grantId, kind, r.slot, at(r.loUs), at(r.hiUs), r.epochMs, r.writer, r.syncs, last,
                r.lastUs == null ? null : at(r.lastUs));
    }

    private String grantWords(Row r) {
        return RegistryWords.of("edge.grant", "grant_id", r.grantId, "kind", kind, "slot", r.slot, "lo", at(r.loUs),
                "hi", at(r.hiUs), "device", device);
    }

    // ---- ids ----

    /** The next xid12 (a store of kind xid12): its machine id the grant's slot, inside the window, above the mark. */
    public Xid nextXid() throws SQLException {
        return (Xid) next("xid12");
    }

    /** The next Snowflake id (a store of kind snowflake): its worker id the grant's slot, inside the window, above the mark. */
    public long nextSnowflake() throws SQLException {
        return (Long) next("snowflake");
    }

    private Object next(String want) throws SQLException {
        if (!kind.equals(want)) throw new IllegalStateException("this edge store's kind is " + kind + ", not " + want);
        synchronized (db) {
            while (true) {
                Row r = row();
                if (r == null) throw new RegistryException(RegistryWords.of("edge.no_grant", "kind", kind, "device", device));
                long now = clockUs.getAsLong();
                Object[] made = rule(r, now); // {id, stored, id-time µs}
                // Compare-and-set: another connection to the file that moved the mark or ended the
                // window (a release) in between makes this one read the row again.
                if (update("UPDATE pg_idgen_edge SET last_id = ?, last_id_us = ? "
                        + "WHERE kind = ? AND grant_id = ? AND last_id IS ? AND hi_us = ?",
                        made[1], made[2], kind, r.grantId, r.lastId, r.hiUs) == 1) {
                    return made[0];
                }
            }
        }
    }

    /** The offline rule (docs/formats.md §10) on a row at a clock reading: {id, last_id as stored, its id-time in µs}. */
    private Object[] rule(Row r, long now) {
        if (r.cloned != null) throw new DeviceConflict(RegistryWords.of("edge.cloned", "kept", r.cloned));
        if (now < r.loUs) {
            throw new ClockBeforeWindow(RegistryWords.of("edge.clock_before_window", "now", at(now), "grant", grantWords(r)));
        }
        if (now >= r.hiUs) {
            throw new ClockAheadOfWindow(RegistryWords.of("edge.window_ended", "now", at(now), "grant", grantWords(r)));
        }
        Object[] made;
        if (kind.equals("xid12")) {
            long t = Math.floorDiv(now, 1_000_000L);
            Xid x;
            if (r.lastId == null) {
                x = Xid.ofFields(t, r.slot, pid.getAsInt() & Xid.MAX_PID, counter.getAsInt() & Xid.MAX_COUNTER);
            } else {
                Xid m = Xid.parse((String) r.lastId);
                int c = (m.counter() + 1) & Xid.MAX_COUNTER;
                x = Xid.ofFields(Math.max(t, m.unixSeconds()), r.slot, m.pid(), c);
                if (x.compareTo(m) <= 0) x = Xid.ofFields(m.unixSeconds() + 1, r.slot, m.pid(), c); // a counter wrap
            }
            made = new Object[] {x, x.toString(), x.unixSeconds() * 1_000_000L};
        } else {
            long epoch = r.epochMs;
            long bits = (long) r.slot << 12;
            long id = (Math.floorDiv(now, 1000L) - epoch) << 22 | bits;
            if (r.lastId != null) {
                long m = (Long) r.lastId;
                if (id <= m) id = (m & Snowflake.MAX_SEQUENCE) < Snowflake.MAX_SEQUENCE ? m + 1 : ((m >> 22) + 1) << 22 | bits;
            }
            made = new Object[] {id, id, (epoch + (id >> 22)) * 1000L};
        }
        if ((Long) made[2] >= r.hiUs) {
            throw new ClockAheadOfWindow(RegistryWords.of("edge.used_up", "grant", grantWords(r),
                    "last", at(r.lastUs == null ? now : r.lastUs), "now", at(now)));
        }
        return made;
    }

    /** A renewing sync's end of the window (the server's), its count; the report is answered. */
    void renewed(long syncs, long hiUs) throws SQLException {
        synchronized (db) {
            update("UPDATE pg_idgen_edge SET syncs = ?, hi_us = ?, attempt = NULL WHERE kind = ?", syncs, hiUs, kind);
        }
    }

    /**
     * Before a releasing sync calls the server: the window ends just after the last id
     * (min(hi_us, last_id_us + one unit)), or at its start when no id was made; {hi_us, last_id_us}.
     * The end is computed from the mark in the same statement: an id another connection makes
     * afterwards stays below it.
     */
    Long[] prepareRelease() throws SQLException {
        synchronized (db) {
            update("UPDATE pg_idgen_edge SET hi_us = min(hi_us, coalesce(last_id_us + ?, lo_us)) WHERE kind = ?",
                    kind.equals("xid12") ? 1_000_000L : 1000L, kind);
            Row r = row();
            return new Long[] {r.hiUs, r.lastUs};
        }
    }

    // ---- the registry ----

    /** enrol(pg, null, LEASE, "edge"): the writer is the device's name. */
    public EdgeGrant enrol(Connection pg) throws SQLException {
        return enrol(pg, null, LEASE, "edge");
    }

    /**
     * Acquires a grant of {@code pool} for {@code lease} (null: the pool's longest) (idgen_acquire, on the pgjdbc connection
     * {@code pg}, outside a transaction) and keeps it in the file, committed ({@code sqlite} in
     * autocommit). {@code writer} null: the device's name. Refuses while the file holds a live
     * grant (its window not ended on this clock, not found on another device).
     */
    public synchronized EdgeGrant enrol(Connection pg, String writer, Duration lease, String pool) throws SQLException {
        outsideSqliteTransaction();
        Row r;
        synchronized (db) {
            r = row();
        }
        if (r != null && r.cloned == null && clockUs.getAsLong() < r.hiUs) {
            throw new RegistryException(RegistryWords.of("edge.already_enrolled", "grant", grantWords(r),
                    "release_call", "release(connection)"));
        }
        String w = writer != null ? writer : device;
        String leaseText = Registry.leaseText(lease);
        Grant g = server(pg, schema -> {
            try (PreparedStatement ps = serverStatement(pg, Registry.statement(schema, lease == null ? "acquireDefault" : "acquire"))) {
                ps.setString(1, kind);
                ps.setString(2, w);
                if (lease != null) ps.setString(3, leaseText);
                ps.setString(lease == null ? 3 : 4, pool);
                return grantOf(ps);
            }
        });
        synchronized (db) {
            db.setAutoCommit(false);
            try {
                update("DELETE FROM pg_idgen_edge WHERE kind = ?", kind);
                update(ENROL, kind, g.grantId(), g.token(), g.slot(), g.loUs(), g.hiUs(), g.epochMs(), w);
                db.commit();
            } catch (SQLException | RuntimeException e) {
                db.rollback();
                throw e;
            } finally {
                db.setAutoCommit(true);
            }
        }
        return grant();
    }

    /** sync(pg, LEASE): report and renew for 28 days. */
    public EdgeGrant sync(Connection pg) throws SQLException {
        return sync(pg, LEASE);
    }

    /** sync(pg, null): report, then release the grant; the store holds none after. */
    public void release(Connection pg) throws SQLException {
        sync(pg, null);
    }

    /**
     * Back online: reports to the registry (idgen_report: this device, its count, its last id's
     * time), then renews the grant for {@code renew} from the server's clock, or with null
     * releases it (idgen_release: the id-time after the last id is freed) and forgets it; both
     * in one transaction on {@code pg} (outside a transaction), then the count and the window are
     * committed to the file ({@code sqlite} in autocommit). A report whose reply was lost is sent
     * again as it was (its attempt number is kept in the file), which the registry answers as
     * before. {@link DeviceConflict} (23505) when the registry shows this state continued on
     * another device: the store makes no more ids of this grant.
     *
     * @return the renewed grant, or null after a release
     */
    public synchronized EdgeGrant sync(Connection pg, Duration renew) throws SQLException {
        outsideSqliteTransaction();
        Row r;
        long attempt;
        synchronized (db) {
            r = row();
            if (r == null) throw new RegistryException(RegistryWords.of("edge.no_grant_to_sync", "kind", kind, "device", device));
            if (r.attempt != null) {
                attempt = r.attempt;
            } else {
                attempt = 1 + ThreadLocalRandom.current().nextLong(Long.MAX_VALUE);
                update("UPDATE pg_idgen_edge SET attempt = ? WHERE kind = ?", attempt, kind);
            }
        }
        String lease = renew == null ? null : Registry.leaseText(renew);
        Long lastUs = renew == null ? prepareRelease()[1] : r.lastUs;
        String lastTime = lastUs == null ? null : at(lastUs).toString();
        long[] answer = server(pg, schema -> {
            long count;
            try (PreparedStatement ps = serverStatement(pg, Registry.statement(schema, "report"))) {
                ps.setLong(1, r.grantId);
                ps.setLong(2, r.token);
                ps.setString(3, device);
                ps.setLong(4, r.syncs);
                ps.setString(5, lastTime);
                ps.setLong(6, attempt);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    count = rs.getLong(1);
                }
            }
            if (renew == null) {
                try (PreparedStatement ps = serverStatement(pg, Registry.statement(schema, "release"))) {
                    ps.setLong(1, r.grantId);
                    ps.setLong(2, r.token);
                    ps.setString(3, lastTime == null ? "-infinity" : lastTime);
                    ps.executeQuery().close();
                }
                return new long[] {count};
            }
            try (PreparedStatement ps = serverStatement(pg, Registry.statement(schema, "renew"))) {
                ps.setLong(1, r.grantId);
                ps.setLong(2, r.token);
                ps.setString(3, lease);
                return new long[] {count, grantOf(ps).hiUs()};
            }
        });
        if (renew == null) {
            synchronized (db) {
                update("DELETE FROM pg_idgen_edge WHERE kind = ?", kind);
            }
            return null;
        }
        renewed(answer[0], answer[1]);
        return grant();
    }

    private void outsideSqliteTransaction() throws SQLException {
        // enrol and sync commit their own writes: inside the caller's transaction they would
        // commit its unfinished rows and marks with them, even when the server call then fails.
        if (!db.getAutoCommit()) throw new RegistryException(RegistryWords.of("edge.sqlite_in_transaction"));
    }

    private interface Calls<T> {
        T run(String schema) throws SQLException;
    }

    private static PreparedStatement serverStatement(Connection pg, String sql) throws SQLException {
        PreparedStatement ps = pg.prepareStatement(sql);
        if (ps.isWrapperFor(PGStatement.class)) ps.unwrap(PGStatement.class).setPrepareThreshold(0); // unnamed: PgBouncer
        return ps;
    }

    private static Grant grantOf(PreparedStatement ps) throws SQLException {
        try (ResultSet rs = ps.executeQuery()) {
            if (!rs.next()) throw new RegistryException("the writer registry answered no row");
            long epoch = rs.getLong("epoch_ms");
            Long epochMs = rs.wasNull() ? null : epoch;
            return new Grant(rs.getLong("grant_id"), rs.getLong("token"), rs.getString("kind"), rs.getInt("slot"),
                    rs.getLong("lo_t"), rs.getLong("hi_t"), epochMs, 0, 0, 0, 0);
        }
    }

    /**
     * The calls in one server transaction on pg, committed: server errors as the registry's,
     * 23505 as DeviceConflict (kept in the file: no more ids), a lost connection as
     * RegistryUnavailable.
     */
    private static void rollback(Connection pg) {
        try {
            pg.rollback();
        } catch (SQLException gone) {
            // the connection is lost: so is the transaction
        }
    }

    private <T> T server(Connection pg, Calls<T> calls) throws SQLException {
        boolean auto = pg.getAutoCommit();
        if (!auto && pg.isWrapperFor(BaseConnection.class)
                && pg.unwrap(BaseConnection.class).getTransactionState() != TransactionState.IDLE) {
            throw new RegistryException(RegistryWords.of("edge.postgres_in_transaction"));
        }
        try {
            pg.setAutoCommit(false);
            T out = calls.run(Catalog.find(pg, 0)[1]);
            pg.commit();
            return out;
        } catch (RuntimeException e) {
            rollback(pg); // never committed by the autocommit restored below
            throw e;
        } catch (SQLException e) {
            rollback(pg);
            if ("23505".equals(e.getSQLState()) && e instanceof PSQLException p && p.getServerErrorMessage() != null) {
                ServerErrorMessage m = p.getServerErrorMessage();
                String kept = RegistryWords.of("edge.kept", "message", m.getMessage(), "detail", m.getDetail());
                synchronized (db) {
                    update("UPDATE pg_idgen_edge SET cloned = ? WHERE kind = ?", kept, kind);
                }
                throw new DeviceConflict(RegistryWords.of("edge.device_conflict", "message", m.getMessage(),
                        "detail", m.getDetail(), "hint", m.getHint()), "23505", e);
            }
            RegistryException mapped = Registry.mapped(e);
            if (mapped != null) throw mapped;
            throw new RegistryUnavailable(RegistryWords.of("unreachable", "cause", String.valueOf(e.getMessage())), null, e);
        } finally {
            if (auto && !pg.isClosed()) pg.setAutoCommit(true);
        }
    }
}
