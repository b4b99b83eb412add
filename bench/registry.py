"""Writer registry benchmark (docs/registry.md), each figure beside a
built-in measured in the same run.

Usage: bash scripts/bench.sh [VERSION] registry [--quick] [--renewals [--seconds N] [--superuser]]

1. idgen_acquire + idgen_release, one after the other from one connection (autocommit, two round
   trips): median and p99, against two round trips that write a row of a plain table (INSERT,
   then UPDATE of that row).
2. 1,000 acquires from 20 connections at once (xid12, since a pool has fewer Snowflake worker
   ids than 1,000; 1 minute leases, released after):
   the wall time, against 1,000 INSERTs into a plain table from 20 connections.
3. The registry after 10,000 grants (a day of a busy fleet: acquired and released, both kinds):
   its tables' size with indexes, and idgen_writer_of on it: the plan (an index scan on the
   exclusion constraint's GiST index) and its time per call against a primary-key lookup of
   the same table. The grants take the pool's default lease (Snowflake: 3 minutes in the app
   pool, which refuses a longer one with IG004; xid12: 10 minutes).
4. The app pool's renewals at 768 writers with the default lease, the server's CPU against a
   plain-table heartbeat at the same rate (bench/registry_renewals.py: 60 s of each, 8 s with
   --quick). --renewals runs this section alone.
"""
import os
import statistics
import sys
import threading
import time

import psycopg

import registry_renewals

HOST = os.environ["PG_IDGEN_HOST"]
PORT = os.environ["PG_IDGEN_PORT"]
DSN = f"host={HOST} port={PORT} user=postgres dbname=bench_registry"
QUICK = "--quick" in sys.argv


def connect():
    return psycopg.connect(DSN, autocommit=True, prepare_threshold=None)


def timed(fn, n):
    out = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def p(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def row(name, ours, builtin, unit="ms"):
    print(f"  {name:<58} {ours:10.3f} {unit}  vs {builtin:10.3f} {unit}  = {ours / builtin:5.2f}x")


def concurrently(threads, work):
    """The wall time of work(0) .. work(threads - 1) run at once; the first error of any fails
    the benchmark."""
    errors = []

    def run(i):
        try:
            work(i)
        except Exception as e:
            errors.append(e)

    ts = [threading.Thread(target=run, args=(i,)) for i in range(threads)]
    t = time.perf_counter()
    for x in ts:
        x.start()
    for x in ts:
        x.join()
    if errors:
        raise errors[0]
    return time.perf_counter() - t


def main():
    if "--renewals" in sys.argv:
        args = sys.argv[1:]
        registry_renewals.run(QUICK, int(args[args.index("--seconds") + 1]) if "--seconds" in args else None,
                              "--superuser" in args)
        return
    with psycopg.connect(DSN.replace("dbname=bench_registry", "dbname=postgres"), autocommit=True) as admin:
        admin.execute("DROP DATABASE IF EXISTS bench_registry")
        admin.execute("CREATE DATABASE bench_registry")
    with connect() as c:
        c.execute("CREATE EXTENSION pg_idgen")
        c.execute("CREATE TABLE plain (id bigserial PRIMARY KEY, writer text, hi bigint)")
    n = 50 if QUICK else 500
    print(f"writer registry ({'quick' if QUICK else 'full'} scale)")

    # 1. Round trips.
    with connect() as c:
        def grant_cycle():
            g = c.execute("SELECT grant_id, token FROM idgen_acquire('snowflake', 'bench', '1 minute')").fetchone()
            c.execute("SELECT 1 FROM idgen_release(%s, %s, '-infinity')", g)

        def plain_cycle():
            i = c.execute("INSERT INTO plain (writer, hi) VALUES ('bench', 1) RETURNING id").fetchone()[0]
            c.execute("UPDATE plain SET hi = 2 WHERE id = %s", (i,))
        for _ in range(20):  # warm both
            grant_cycle()
            plain_cycle()
        ours, base = [], []
        for _ in range(n):  # interleaved: both see the same machine
            ours += timed(grant_cycle, 1)
            base += timed(plain_cycle, 1)
    row("acquire + release, median", statistics.median(ours) * 1e3, statistics.median(base) * 1e3)
    row("acquire + release, p99", p(ours, 0.99) * 1e3, p(base, 0.99) * 1e3)

    # 2. 1,000 acquires from 20 connections at once: xid12 grants, since a pool has fewer
    # Snowflake worker ids (768 in 'app') than 1,000 writers.
    total, threads = (200 if QUICK else 1000), 20
    conns = [connect() for _ in range(threads)]
    grants = [[] for _ in range(threads)]

    def acquire(i):
        for k in range(total // threads):
            grants[i].append(conns[i].execute(
                "SELECT grant_id, token, slot FROM idgen_acquire('xid12', %s, '1 minute')",
                (f"bench-{i}-{k}",)).fetchone())

    def insert(i):
        for k in range(total // threads):
            conns[i].execute("INSERT INTO plain (writer, hi) VALUES (%s, 1)", (f"bench-{i}-{k}",))
    wall = concurrently(threads, acquire)
    base_wall = concurrently(threads, insert)
    flat = [g for gs in grants for g in gs]
    row(f"{total} acquires from {threads} connections, wall", wall, base_wall, "s")
    with connect() as c:
        overlapping = c.execute("""SELECT count(*) FROM idgen_registry_grant a JOIN idgen_registry_grant b
            ON a.kind = b.kind AND a.slot = b.slot AND a.grant_id < b.grant_id AND a.span && b.span""").fetchone()[0]
        print(f"  {len(flat)} grants on {len({g[2] for g in flat})} distinct machine ids, {overlapping} overlapping windows")
        assert len(flat) == total and overlapping == 0
        for g in flat:
            c.execute("SELECT 1 FROM idgen_release(%s, %s, '-infinity')", g[:2])
    for x in conns:
        x.close()

    # 3. 10,000 grants, then idgen_writer_of.
    grants_total = 2000 if QUICK else 10000
    with connect() as c:
        c.execute(f"""DO $$ DECLARE g record; BEGIN
            FOR n IN 1 .. {grants_total // 2} LOOP
                SELECT * INTO g FROM idgen_acquire(CASE WHEN n % 2 = 0 THEN 'xid12' ELSE 'snowflake' END, 'fleet-' || n);
                PERFORM idgen_release(g.grant_id, g.token, g.lo + interval '1 s');
            END LOOP; END $$""")
        c.execute(f"""DO $$ DECLARE g record; BEGIN
            FOR n IN 1 .. {grants_total // 2} LOOP
                SELECT * INTO g FROM idgen_acquire('xid12', 'fleet-x-' || n);
                PERFORM idgen_release(g.grant_id, g.token, NULL);
            END LOOP; END $$""")
        c.execute("VACUUM ANALYZE idgen_registry_grant, idgen_registry_slot")
        count = c.execute("SELECT count(*) FROM idgen_registry_grant").fetchone()[0]
        size = c.execute("SELECT pg_total_relation_size('idgen_registry_grant') + pg_total_relation_size('idgen_registry_slot')").fetchone()[0]
        print(f"  registry after {count} grants and reservations: {size / 1024 / 1024:.2f} MiB with indexes "
              f"({size / count:.0f} bytes a grant)")
        sample = c.execute("""SELECT (get_byte(m, 0) << 16 | get_byte(m, 1) << 8 | get_byte(m, 2)), lo FROM
            (SELECT substr(int4send(slot), 2, 3) AS m, lo FROM idgen_grants WHERE kind = 'xid12' AND NOT reserved
             ORDER BY grant_id DESC LIMIT 1) s""").fetchone()
        probe = c.execute("SELECT xid12_from_parts(%s::timestamptz + interval '0.2 s', substr(int4send(%s), 2, 3), 1, 1)",
                          (sample[1], sample[0])).fetchone()[0]
        plan = "\n".join(r[0] for r in c.execute(
            "EXPLAIN (COSTS OFF) SELECT g.writer FROM idgen_grants g JOIN idgen_registry_grant r USING (grant_id) "
            "WHERE r.span @> idgen_registry_point(%s::xid12)", (probe,)))
        print("  idgen_writer_of's query plan:\n    " + plan.replace("\n", "\n    "))
        assert "idgen_registry_windows_disjoint" in plan or "Index" in plan, plan
        reps = 200 if QUICK else 2000
        ours = timed(lambda: c.execute("SELECT writer FROM idgen_writer_of(%s::xid12)", (probe,)).fetchall(), reps)
        base = timed(lambda: c.execute("SELECT writer FROM plain WHERE id = %s", (5,)).fetchall(), reps)
        row("idgen_writer_of(xid12) on the full registry, median", statistics.median(ours) * 1e3,
            statistics.median(base) * 1e3)

    # 4. The app pool's renewals at 768 writers.
    registry_renewals.run(QUICK)


if __name__ == "__main__":
    main()
