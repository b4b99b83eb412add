package io.github.pgidgen;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import org.postgresql.PGConnection;
import org.postgresql.core.BaseConnection;

/**
 * Binding and reading xid12 through pgjdbc. Without registering anything: bind with
 * {@link #bind} (the text as {@code Types.OTHER}, the server casts it) and read with
 * {@link #get} (the column's text). With {@link #register} on a connection of the native
 * edition, xid12 columns come back as {@link PgXid} and travel in binary (12 bytes) where pgjdbc
 * uses binary transfer (server-prepared statements, or {@code prepareThreshold=-1}).
 */
public final class XidJdbc {
    private XidJdbc() {}

    /** Binds an id (or NULL) as an xid12 parameter: its text, typed unknown so the server reads it as the column's type. */
    public static void bind(PreparedStatement ps, int index, Xid xid) throws SQLException {
        if (xid == null) ps.setNull(index, Types.OTHER);
        else ps.setObject(index, xid.toString(), Types.OTHER);
    }

    /** An xid12 column (binary PgXid, or the text of either edition) as an Xid; null for NULL. */
    public static Xid get(ResultSet rs, int column) throws SQLException {
        Object o = rs.getObject(column);
        if (o == null) return null;
        if (o instanceof PgXid) return ((PgXid) o).xid();
        if (o instanceof byte[]) return Xid.fromBytes((byte[]) o);
        return Xid.parse(o.toString());
    }

    /**
     * Registers PgXid for xid12 on this connection and, on the native edition (a base type of 12
     * bytes), binary transfer both ways for its oid. Returns the edition ("native" or
     * "portable"), found by tests/vectors/edition_rule.sql's query.
     */
    public static String register(Connection c) throws SQLException {
        String edition;
        int oid;
        try (PreparedStatement ps = c.prepareStatement(Catalog.EDITION_QUERY); ResultSet rs = ps.executeQuery()) {
            if (!rs.next()) throw new SQLException("the pg_idgen extension is not installed in this database", "42704");
            edition = rs.getString("edition");
            oid = rs.getInt("oid");
        }
        PGConnection pg = c.unwrap(PGConnection.class);
        pg.addDataType("xid12", PgXid.class);
        if ("native".equals(edition) && c.isWrapperFor(BaseConnection.class)) {
            BaseConnection base = c.unwrap(BaseConnection.class);
            base.getQueryExecutor().addBinaryReceiveOid(oid);
            base.getQueryExecutor().addBinarySendOid(oid);
        }
        return edition;
    }
}
