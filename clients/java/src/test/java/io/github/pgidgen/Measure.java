package io.github.pgidgen;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Arrays;
import java.util.Properties;
import java.util.UUID;

/**
 * The Java client's measurements (scripts/test_java.sh --server; clients/java/README.md): per id,
 * the grant-bound generators against the plain ones and UUID.randomUUID(); an acquire + release
 * round trip; decoding 1M xid12 from a result set, binary against text. Each figure is the median
 * of rounds taken in this run, the pairs alternated, so that both sides of a ratio see the same
 * machine.
 */
public final class Measure {
    private static volatile Object sink;

    private Measure() {}

    interface Body {
        void run(int n) throws Exception;
    }

    private static final java.lang.management.ThreadMXBean CPU = java.lang.management.ManagementFactory.getThreadMXBean();

    /**
     * ns per call: the median of `rounds` rounds of n calls, in this thread's CPU time (the
     * machine is shared: time other processes take is not counted; a wait for the next
     * millisecond is not either), or in wall time.
     */
    private static double[] perCall(int rounds, int n, boolean cpu, Body... bodies) throws Exception {
        double[][] t = new double[bodies.length][rounds];
        for (int r = 0; r < rounds; r++) {
            for (int b = 0; b < bodies.length; b++) {
                long s = cpu ? CPU.getCurrentThreadCpuTime() : System.nanoTime();
                bodies[b].run(n);
                t[b][r] = ((cpu ? CPU.getCurrentThreadCpuTime() : System.nanoTime()) - s) / (double) n;
            }
        }
        double[] out = new double[bodies.length];
        for (int b = 0; b < bodies.length; b++) {
            Arrays.sort(t[b]);
            out[b] = t[b][rounds / 2];
        }
        return out;
    }

    public static void main(String[] args) throws Exception {
        String db = Server.freshDatabase("java_measure");
        String url = Server.in(Server.url(), db);
        Properties props = RegistryServerTest.props();
        try (Registry reg = Registry.connect(url, props, RegistryOptions.defaults().writer("java-measure"))) {
            GrantSnowflake gs = reg.snowflake();
            GrantXid gx = reg.xid12();
            SnowflakeGenerator ps = new SnowflakeGenerator(1000);
            XidGenerator px = new XidGenerator();
            Body boundFlake = n -> {
                long x = 0;
                for (int i = 0; i < n; i++) x ^= gs.nextId();
                sink = x;
            };
            Body plainFlake = n -> {
                long x = 0;
                for (int i = 0; i < n; i++) x ^= ps.nextId();
                sink = x;
            };
            Body boundXid = n -> {
                Object x = null;
                for (int i = 0; i < n; i++) x = gx.next();
                sink = x;
            };
            Body plainXid = n -> {
                Object x = null;
                for (int i = 0; i < n; i++) x = px.next();
                sink = x;
            };
            Body uuid = n -> {
                Object x = null;
                for (int i = 0; i < n; i++) x = UUID.randomUUID();
                sink = x;
            };
            perCall(3, 200_000, false, boundFlake, plainFlake, boundXid, plainXid, uuid); // warm up
            double[] f = perCall(7, 1_000_000, true, boundFlake, plainFlake);
            double[] x = perCall(7, 1_000_000, true, boundXid, plainXid, uuid);
            System.out.printf("per id, one thread (median of 7 rounds of 1M, the thread's CPU time):%n");
            System.out.printf("  Snowflake: bound %.1f ns, plain %.1f ns: %.3fx (4,096 ids a millisecond at most: 244 ns)%n", f[0], f[1], f[0] / f[1]);
            System.out.printf("  xid12:     bound %.1f ns, plain %.1f ns: %.3fx%n", x[0], x[1], x[0] / x[1]);
            System.out.printf("  UUID.randomUUID(): %.1f ns: bound Snowflake %.3fx, bound xid12 %.3fx of it%n", x[2], f[0] / x[2], x[0] / x[2]);

            // acquire + release: two statements over the Registry's own connection
            int n = 200;
            long[] rt = new long[n];
            for (int i = 0; i < n + 20; i++) {
                long s = System.nanoTime();
                GrantSnowflake g = reg.snowflake();
                g.close();
                if (i >= 20) rt[i - 20] = System.nanoTime() - s;
            }
            Arrays.sort(rt);
            System.out.printf("acquire + release (Snowflake, 200 after 20 to warm up): median %.2f ms, p99 %.2f ms%n",
                    rt[n / 2] / 1e6, rt[n * 99 / 100] / 1e6);
        }

        // decoding 1M xid12 from a result set: text (getString, Xid.parse) against binary (PgXid, 12 bytes)
        try (Connection c = Server.connect(url); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE m AS SELECT gen_xid12() AS x FROM generate_series(1, 1000000)");
        }
        Properties bin = RegistryServerTest.props();
        bin.setProperty("prepareThreshold", "-1");
        try (Connection text = Server.connect(url); Connection binary = java.sql.DriverManager.getConnection(url, bin)) {
            XidJdbc.register(binary);
            Body readText = k -> {
                try (PreparedStatement ps = text.prepareStatement("SELECT x FROM m"); ResultSet rs = ps.executeQuery()) {
                    int rows = 0;
                    Object last = null;
                    while (rs.next()) {
                        last = Xid.parse(rs.getString(1));
                        rows++;
                    }
                    if (rows != 1_000_000) throw new AssertionError(rows);
                    sink = last;
                }
            };
            Body readBinary = k -> {
                try (PreparedStatement ps = binary.prepareStatement("SELECT x FROM m"); ResultSet rs = ps.executeQuery()) {
                    int rows = 0;
                    Object last = null;
                    while (rs.next()) {
                        last = ((PgXid) rs.getObject(1)).xid();
                        rows++;
                    }
                    if (rows != 1_000_000) throw new AssertionError(rows);
                    sink = last;
                }
            };
            perCall(1, 1, false, readText, readBinary);
            double[] d = perCall(5, 1, false, readText, readBinary);
            double[] dc = perCall(5, 1, true, readText, readBinary);
            System.out.printf("1M xid12 from a result set (median of 5): wall time: text %.0f ms, binary %.0f ms: binary %.3fx of text;%n"
                    + "  this thread's CPU time (the client's share): text %.0f ms, binary %.0f ms: binary %.3fx of text%n",
                    d[0] / 1e6, d[1] / 1e6, d[1] / d[0], dc[0] / 1e6, dc[1] / 1e6, dc[1] / dc[0]);
        }
    }
}
