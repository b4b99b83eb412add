package io.github.pgidgen;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.stream.Stream;

/**
 * The Java client's part of the cross-client interop check (tests/interop/run.sh): {@code make
 * DIR} writes DIR/java.ids ({@code new XidGenerator().next()}, {@code new SnowflakeGenerator(4)});
 * {@code read DIR} reads every DIR/*.ids and writes DIR/java.read (tests/interop/README.md).
 */
public final class InteropCli {
    private static final int N = 300;

    private InteropCli() {
    }

    public static void main(String[] args) throws IOException {
        Path dir = Path.of(args[1]);
        switch (args[0]) {
            case "make" -> make(dir);
            case "read" -> read(dir);
            default -> throw new IllegalArgumentException("usage: InteropCli make|read DIR");
        }
    }

    private static void make(Path dir) throws IOException {
        XidGenerator xids = new XidGenerator();
        SnowflakeGenerator flakes = new SnowflakeGenerator(4);
        List<String> lines = new ArrayList<>();
        for (int i = 0; i < N; i++) lines.add("x " + xids.next());
        for (int i = 0; i < N; i++) lines.add("s " + flakes.nextId());
        Files.write(dir.resolve("java.ids"), lines, StandardCharsets.UTF_8);
    }

    private static void read(Path dir) throws IOException {
        List<Path> files;
        try (Stream<Path> s = Files.list(dir)) {
            files = new ArrayList<>(s.filter(p -> p.toString().endsWith(".ids")).sorted().toList());
        }
        List<Xid> xids = new ArrayList<>();
        List<Long> flakes = new ArrayList<>();
        List<String> out = new ArrayList<>();
        for (Path f : files) {
            for (String line : Files.readAllLines(f, StandardCharsets.UTF_8)) {
                String[] kv = line.split(" ");
                if (kv[0].equals("x")) {
                    Xid x = Xid.parse(kv[1]);
                    xids.add(x);
                    out.add("x " + x + " " + x.unixSeconds() + " " + x.machine() + " " + x.pid() + " " + x.counter());
                } else {
                    long s = Long.parseLong(kv[1]);
                    flakes.add(s);
                    out.add("s " + s + " " + Snowflake.unixMs(s) + " " + Snowflake.worker(s) + " " + Snowflake.sequence(s));
                }
            }
        }
        Collections.sort(xids);
        Collections.sort(flakes);
        for (Xid x : xids) out.add("ox " + x);
        for (long s : flakes) out.add("os " + s);
        Files.write(dir.resolve("java.read"), out, StandardCharsets.UTF_8);
    }
}
