"""pg_idgen benchmarks: each result is a ratio against a built-in measured in the same run.

Usage: scripts/bench.sh (starts a release-build cluster and runs this). Each case runs its two
queries back to back ROUNDS times; the ratio printed is the median of the per-round ratios,
which drift on these shared, noisy machines disturbs less than a ratio of medians.
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

import psycopg

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "9"))
HOST = os.environ["PG_IDGEN_HOST"]
PORT = os.environ["PG_IDGEN_PORT"]
DSN = f"host={HOST} port={PORT} user=postgres dbname=postgres"


def timed(conn, sql: str) -> float:
    start = time.perf_counter()
    conn.execute(sql)
    return time.perf_counter() - start


def compare(conn, title: str, ours: str, builtin: str, target: float | None, setup=()) -> None:
    for statement in setup:
        conn.execute(statement)
    ours_times, builtin_times = [], []
    timed(conn, ours), timed(conn, builtin)  # warm caches
    for _ in range(ROUNDS):
        ours_times.append(timed(conn, ours))
        builtin_times.append(timed(conn, builtin))
    a, b = statistics.median(ours_times), statistics.median(builtin_times)
    ratio = statistics.median(x / y for x, y in zip(ours_times, builtin_times))
    verdict = "" if target is None else ("  (target <= %.2f: %s)" % (target, "met" if ratio <= target else "MISSED"))
    print(f"{title}\n    ours {a * 1000:9.1f} ms   built-in {b * 1000:9.1f} ms   ratio {ratio:5.2f}{verdict}")


def pgbench_tps(script: str, clients: int, seconds: int) -> float:
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
        f.write(script + "\n")
    pgbench = os.path.join(os.environ["PG_IDGEN_BINDIR"], "pgbench")
    # Prepared statements, so that parsing does not hide the cost of the call itself.
    cmd = [pgbench, "-n", "-M", "prepared", "-h", HOST, "-p", PORT, "-U", "postgres", "-c", str(clients),
           "-j", "2", "-T", str(seconds), "-f", f.name, "postgres"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    os.unlink(f.name)
    for line in out.splitlines():
        if line.startswith("tps ="):
            return float(line.split()[2])
    raise RuntimeError(out)


def main() -> None:
    with psycopg.connect(DSN, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_idgen")
        conn.execute("SET work_mem = '1GB'")
        conn.execute("SET max_parallel_workers_per_gather = 0")
        version = conn.execute("SELECT current_setting('server_version')").fetchone()[0]
        # PostgreSQL 18 has a built-in time-ordered uuid, the closest contender.
        has_uuidv7 = conn.execute("SELECT current_setting('server_version_num')::int >= 180000").fetchone()[0]
        print(f"pg_idgen benchmarks on PostgreSQL {version}: {ROUNDS} rounds, ratio = median of per-round ratios\n")

        print("== xid12")
        compare(conn, "generate 3M: count(gen_xid12()) vs count(gen_random_uuid())",
                "SELECT count(gen_xid12()) FROM generate_series(1, 3000000)",
                "SELECT count(gen_random_uuid()) FROM generate_series(1, 3000000)", 0.2)
        if has_uuidv7:
            compare(conn, "generate 3M: count(gen_xid12()) vs count(uuidv7())",
                    "SELECT count(gen_xid12()) FROM generate_series(1, 3000000)",
                    "SELECT count(uuidv7()) FROM generate_series(1, 3000000)", None)
        uuid_generators = ["gen_random_uuid()"] + (["uuidv7()"] if has_uuidv7 else [])
        conn.execute("DROP TABLE IF EXISTS bench_pk_xid12, bench_pk_uuid")
        conn.execute("CREATE UNLOGGED TABLE bench_pk_xid12 (id xid12 PRIMARY KEY DEFAULT gen_xid12(), n int)")
        for generator in uuid_generators:
            conn.execute("DROP TABLE IF EXISTS bench_pk_uuid")
            conn.execute(f"CREATE UNLOGGED TABLE bench_pk_uuid (id uuid PRIMARY KEY DEFAULT {generator}, n int)")
            compare(conn, f"insert 1M rows into a primary-key table: DEFAULT gen_xid12() vs DEFAULT {generator}",
                    "TRUNCATE bench_pk_xid12; INSERT INTO bench_pk_xid12 (n) SELECT g FROM generate_series(1, 1000000) g",
                    "TRUNCATE bench_pk_uuid; INSERT INTO bench_pk_uuid (n) SELECT g FROM generate_series(1, 1000000) g", None)
        conn.execute("DROP TABLE bench_pk_xid12, bench_pk_uuid")
        compare(conn, "generate 3M: count(gen_xid12()) vs count(*) of the bare series",
                "SELECT count(gen_xid12()) FROM generate_series(1, 3000000)",
                "SELECT count(*) FROM generate_series(1, 3000000)", 2.0)
        conn.execute("DROP TABLE IF EXISTS bench_burst, bench_spread, bench_uuid")
        # Ids made by one backend in a burst (a few seconds: abbreviated keys give up), and ids
        # spread over a year (a long-lived table), each stored in random order.
        conn.execute("CREATE TABLE bench_burst AS SELECT x FROM (SELECT gen_xid12() AS x FROM generate_series(1, 2000000)) s ORDER BY random()")
        conn.execute("CREATE TABLE bench_spread AS SELECT gen_xid12(now() - random() * interval '365 days') AS x FROM generate_series(1, 2000000)")
        conn.execute("CREATE TABLE bench_uuid AS SELECT gen_random_uuid() AS u FROM generate_series(1, 2000000)")
        conn.execute("DROP TABLE IF EXISTS bench_uuidv7")
        if has_uuidv7:  # made in one burst, stored in random order, like bench_burst
            conn.execute("CREATE TABLE bench_uuidv7 AS SELECT u FROM (SELECT uuidv7() AS u FROM generate_series(1, 2000000)) s ORDER BY random()")
        conn.execute("VACUUM ANALYZE bench_burst, bench_spread, bench_uuid")
        compare(conn, "sort 2M random-order ids made in one burst vs 2M uuid",
                "SELECT * FROM (SELECT x FROM bench_burst ORDER BY x) s OFFSET 2000000",
                "SELECT * FROM (SELECT u FROM bench_uuid ORDER BY u) s OFFSET 2000000", 1.1)
        if has_uuidv7:
            compare(conn, "sort 2M random-order ids made in one burst vs 2M uuidv7() made in one burst",
                    "SELECT * FROM (SELECT x FROM bench_burst ORDER BY x) s OFFSET 2000000",
                    "SELECT * FROM (SELECT u FROM bench_uuidv7 ORDER BY u) s OFFSET 2000000", None)
        compare(conn, "sort 2M random-order ids spread over a year vs 2M uuid",
                "SELECT * FROM (SELECT x FROM bench_spread ORDER BY x) s OFFSET 2000000",
                "SELECT * FROM (SELECT u FROM bench_uuid ORDER BY u) s OFFSET 2000000", 1.1)
        compare(conn, "text output of 2M values: count(x::text) vs count(u::text)",
                "SELECT count(x::text) FROM bench_spread",
                "SELECT count(u::text) FROM bench_uuid", 1.0)
        conn.execute("DROP TABLE IF EXISTS bench_burst, bench_spread, bench_uuid, bench_uuidv7")

        print("\n== rapkey")
        conn.execute("DROP TABLE IF EXISTS bench_keys, bench_rk, bench_text")
        conn.execute(
            "CREATE TABLE bench_keys AS SELECT rapkey_build('ord', 'cn', 'sh', '2024' || lpad((g % 12 + 1)::text, 2, '0'), g::text)::text AS k "
            "FROM generate_series(1, 1000000) g")
        conn.execute("CREATE UNLOGGED TABLE bench_rk (k rapkey)")
        conn.execute('CREATE UNLOGGED TABLE bench_text (k text COLLATE "C")')
        conn.execute('DROP DOMAIN IF EXISTS bench_trivial_domain')
        conn.execute('CREATE DOMAIN bench_trivial_domain AS text COLLATE "C" CHECK (length(VALUE) > 0)')
        conn.execute("CREATE UNLOGGED TABLE bench_trivial (k bench_trivial_domain)")
        compare(conn, "insert 1M keys: rapkey column vs text COLLATE \"C\" column",
                "TRUNCATE bench_rk; INSERT INTO bench_rk SELECT k FROM bench_keys",
                "TRUNCATE bench_text; INSERT INTO bench_text SELECT k FROM bench_keys", 1.25)
        compare(conn, "context: insert 1M keys into a domain whose CHECK is length(VALUE) > 0 vs text",
                "TRUNCATE bench_trivial; INSERT INTO bench_trivial SELECT k FROM bench_keys",
                "TRUNCATE bench_text; INSERT INTO bench_text SELECT k FROM bench_keys", None)
        compare(conn, "rapkey_is_valid over 1M keys vs length()",
                "SELECT count(*) FILTER (WHERE rapkey_is_valid(k)) FROM bench_keys",
                "SELECT count(*) FILTER (WHERE length(k) > 0) FROM bench_keys", None)
        conn.execute("DROP TABLE bench_keys, bench_rk, bench_text, bench_trivial")
        conn.execute("DROP DOMAIN bench_trivial_domain")

        print("\n== snowflake")
        conn.execute("DROP SEQUENCE IF EXISTS bench_seq")
        conn.execute("CREATE SEQUENCE bench_seq")
        compare(conn, "generate 3M: count(gen_snowflake()) vs count(nextval('seq'))",
                "SELECT count(gen_snowflake()) FROM generate_series(1, 3000000)",
                "SELECT count(nextval('bench_seq')) FROM generate_series(1, 3000000)", 1.0)
        seconds = int(os.environ.get("BENCH_PGBENCH_SECONDS", "10"))
        tps = {}
        for _ in range(2):
            for name, script in (("snowflake", "SELECT gen_snowflake();"), ("nextval", "SELECT nextval('bench_seq');")):
                tps.setdefault(name, []).append(pgbench_tps(script, 8, seconds))
        ours, builtin = statistics.median(tps["snowflake"]), statistics.median(tps["nextval"])
        ratio = builtin / ours
        print(f"pgbench -M prepared, 8 clients x {seconds} s, one call per transaction: time per call vs nextval\n"
              f"    ours {ours:9.0f} tps   built-in {builtin:9.0f} tps   ratio {ratio:5.2f}"
              f"  (target <= 1.00: {'met' if ratio <= 1.0 else 'MISSED'})")
        conn.execute("DROP SEQUENCE bench_seq")


if __name__ == "__main__":
    sys.exit(main())
