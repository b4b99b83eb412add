package io.github.pgidgen;

import java.sql.SQLException;
import org.postgresql.util.PGBinaryObject;
import org.postgresql.util.PGobject;

/**
 * An xid12 as pgjdbc's PGobject of type xid12: bind it with {@code setObject(i, PgXid.of(id))};
 * after {@link XidJdbc#register} pgjdbc hands xid12 columns out as PgXid ({@code getObject}). Its
 * binary form (PGBinaryObject) is the 12 bytes, which pgjdbc uses where binary transfer is on for
 * xid12's oid ({@link XidJdbc#register} turns it on for the native edition).
 */
public final class PgXid extends PGobject implements PGBinaryObject {
    private static final long serialVersionUID = 1L;
    private Xid xid;

    public PgXid() {
        setType("xid12");
    }

    public static PgXid of(Xid xid) {
        PgXid o = new PgXid();
        o.xid = xid;
        o.value = xid == null ? null : xid.toString();
        return o;
    }

    /** The id (null for SQL NULL). */
    public Xid xid() {
        return xid;
    }

    @Override
    public void setValue(String value) throws SQLException {
        this.xid = value == null ? null : Xid.parse(value);
        this.value = value == null ? null : xid.toString();
    }

    @Override
    public void setByteValue(byte[] bytes, int offset) {
        byte[] b = new byte[Xid.BYTES];
        System.arraycopy(bytes, offset, b, 0, Math.min(Xid.BYTES, bytes.length - offset));
        this.xid = Xid.fromBytes(b);
        this.value = null;
    }

    @Override
    public String getValue() {
        if (value == null && xid != null) value = xid.toString();
        return value;
    }

    @Override
    public int lengthInBytes() {
        return Xid.BYTES;
    }

    @Override
    public void toBytes(byte[] bytes, int offset) {
        System.arraycopy(xid.toBytes(), 0, bytes, offset, Xid.BYTES);
    }

    @Override
    public boolean isNull() {
        return xid == null;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof PgXid && java.util.Objects.equals(((PgXid) o).xid, xid);
    }

    @Override
    public int hashCode() {
        return java.util.Objects.hashCode(xid);
    }

    @Override
    public PgXid clone() throws CloneNotSupportedException {
        return (PgXid) super.clone();
    }
}
