"""The server's cost of the app pool's renewals (issue 34, "Measured"): every Snowflake worker id
of the built-in app pool granted with the pool's default lease (lease NULL; 3 minutes), renewed
at half the lease (as the clients do) at the rate of 768 writers, against a built-in heartbeat
(an UPDATE of one row of a plain table) at the same rate over the same connections.

Usage: bash scripts/bench.sh [VERSION] registry --renewals [--quick] [--seconds N] [--superuser]
(also section 4 of bench/registry.py's full run). Runs on its own database, bench_renewals.

- The grants: every free Snowflake slot of the app pool (768 worker ids; on the bench cluster
  the server holds worker id 1 itself, pg_idgen.worker_id, so 767), acquired with no lease by a
  role allowed in the pool with a cap of 768 (idgen_pool_allow), or by the superuser with
  --superuser. The renewals: the clients' own statement (autocommit, not prepared), the real
  idgen_renew with lease NULL (the grant's own), spread evenly over 16 connections of that role.
- The rate: 768 writers each renewing once per half lease, 768 / 90 s = 8.53 renewals a second.
- The window: N seconds of renewals (default 60; --quick 8) and as many of the built-in, in
  alternating rounds (4; --quick 2) so that both see the same machine.
- The server's CPU time, from /proc: (a) the 16 backends (sum_exec_runtime of
  /proc/PID/schedstat, in ns), and (b) the whole server: the postmaster's utime + stime +
  cutime + cstime (its exited children: autovacuum workers) and every live child's utime +
  stime (backends, WAL writer, checkpointer, ...) from /proc/PID/stat, in clock ticks.
  Each as a share of one core (CPU seconds over wall seconds of the phase) and per call.
- The latency of a renewal (one round trip: the call and its commit) at the client: median and
  p99, against the heartbeat's.
"""
import os
import statistics
import sys
import threading
import time

import psycopg

HOST = os.environ["PG_IDGEN_HOST"]
PORT = os.environ["PG_IDGEN_PORT"]
DB = "bench_renewals"
ROLE = "bench_renewer"
WRITERS = 768  # the app pool's Snowflake worker ids: the rate is that of 768 writers
CONNECTIONS = 16
TICK = os.sysconf("SC_CLK_TCK")

# The Python client's renew statement (clients/python/src/pg_idgen/_registry.py), on public.
UNIX_US = ("pg_catalog.floor(pg_catalog.extract('epoch', {c}) OPERATOR(pg_catalog.*) "
           "1000000::pg_catalog.numeric)::pg_catalog.int8")
RENEW = (f"SELECT grant_id, token, kind, slot, epoch_ms, {UNIX_US.format(c='lo')}, {UNIX_US.format(c='hi')}, "
         f"{UNIX_US.format(c='server_time')} FROM public.idgen_renew(%s::pg_catalog.int8, %s::pg_catalog.int8, "
         f"%s::pg_catalog.interval)")
HEARTBEAT = "UPDATE public.heartbeat SET renewed_at = pg_catalog.clock_timestamp() WHERE writer = %s RETURNING renewed_at"


def dsn(user, db=DB):
    return f"host={HOST} port={PORT} user={user} dbname={db}"


def connect(user):
    return psycopg.connect(dsn(user), autocommit=True, prepare_threshold=None)


def stat(pid):
    """(ppid, utime + stime, cutime + cstime) of a process, in clock ticks; None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None
    # After the name: state ppid ... utime(14) stime(15) cutime(16) cstime(17), 1-based from pid.
    return int(fields[1]), int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14])


def server_ticks(postmaster):
    """The whole server's CPU time so far, in ticks: the postmaster's own and its reaped
    children's, and every live child's own."""
    _, own, children = stat(postmaster)
    total = own + children
    for name in os.listdir("/proc"):
        if name.isdigit():
            s = stat(int(name))
            if s is not None and s[0] == postmaster:
                total += s[1]
    return total


def exec_ns(pids):
    """The backends' CPU time so far, in ns (/proc/PID/schedstat's first field)."""
    total = 0
    for pid in pids:
        with open(f"/proc/{pid}/schedstat") as f:
            total += int(f.read().split()[0])
    return total


def p(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def row(name, ours, builtin, unit):
    print(f"  {name:<58} {ours:10.3f} {unit}  vs {builtin:10.3f} {unit}  = {ours / builtin:5.2f}x")


def phase(conns, pids, postmaster, rate, seconds, call, first):
    """Calls call(conn, k) for k = first, first + 1, ... at `rate` a second for `seconds`, call k
    on connection k mod len(conns), each connection from its own thread. Returns the wall time,
    the backends' CPU ns, the server's CPU ticks and each call's latency."""
    n = int(round(rate * seconds))
    lat = [[] for _ in conns]
    errors = []

    def work(i):
        try:
            for k in range(i, n, len(conns)):
                due = t0 + k / rate
                wait = due - time.perf_counter()
                if wait > 0:
                    time.sleep(wait)
                t = time.perf_counter()
                call(conns[i], first + k)
                lat[i].append(time.perf_counter() - t)
        except Exception as e:
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(conns))]
    ns0, ticks0 = exec_ns(pids), server_ticks(postmaster)
    t0 = time.perf_counter()
    for x in threads:
        x.start()
    for x in threads:
        x.join()
    wall = max(time.perf_counter() - t0, seconds)
    ns1, ticks1 = exec_ns(pids), server_ticks(postmaster)
    if errors:
        raise errors[0]
    return wall, ns1 - ns0, ticks1 - ticks0, [x for xs in lat for x in xs], n


def run(quick=False, seconds=None, superuser=False):
    seconds = seconds or (8 if quick else 60)
    rounds = 2 if quick else 4
    with psycopg.connect(dsn("postgres", "postgres"), autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {DB}")
        admin.execute(f"CREATE DATABASE {DB}")
    user = "postgres" if superuser else ROLE
    with psycopg.connect(dsn("postgres"), autocommit=True) as admin:
        admin.execute("CREATE EXTENSION pg_idgen")
        if not superuser:
            admin.execute(f"DO $$ BEGIN CREATE ROLE {ROLE} LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$")
            admin.execute(f"SELECT idgen_pool_allow('app', '{ROLE}'::regrole, {WRITERS})")
        admin.execute("CREATE TABLE heartbeat (writer integer PRIMARY KEY, renewed_at timestamptz)")
        admin.execute(f"INSERT INTO heartbeat SELECT n, clock_timestamp() FROM generate_series(0, {WRITERS - 1}) n")
        admin.execute(f"GRANT SELECT, UPDATE ON heartbeat TO {user}")
        admin.execute("VACUUM ANALYZE heartbeat")

        conns = [connect(user) for _ in range(CONNECTIONS)]
        pids = [c.info.backend_pid for c in conns]
        postmaster = stat(pids[0])[0]
        # Every free Snowflake slot of the app pool, lease NULL (the pool's default), taken in
        # turn from every connection until the pool answers 53400 (slots exhausted).
        grants = []
        while True:
            try:
                grants.append(conns[len(grants) % CONNECTIONS].execute(
                    "SELECT grant_id, token FROM public.idgen_acquire('snowflake', %s, NULL, 'app')",
                    (f"writer-{len(grants)}",)).fetchone())
            except psycopg.Error as e:
                if e.sqlstate != "53400":
                    raise
                break
        lease_s, server_slots = admin.execute(
            """SELECT extract(epoch FROM (SELECT DISTINCT lease FROM idgen_registry_grant WHERE NOT reserved)),
                      (SELECT count(*) FROM idgen_registry_grant WHERE reserved AND kind = 'snowflake')""").fetchone()
        lease_s = float(lease_s)
        assert len(grants) + server_slots == WRITERS, (len(grants), server_slots)
        rate = WRITERS / (lease_s / 2)
        print(f"renewals of the app pool ({'quick' if quick else 'full'} scale): {len(grants)} Snowflake grants "
              f"(+{server_slots} the server's own), lease {lease_s:.0f} s (the pool's default), as "
              f"{'the superuser' if superuser else f'a role capped at {WRITERS}'}; {WRITERS} writers renewing at half "
              f"the lease = {rate:.2f}/s over {CONNECTIONS} connections, {seconds} s of each in {rounds} rounds")

        def renew(c, k):
            g = grants[k % len(grants)]
            r = c.execute(RENEW, (g[0], g[1], None)).fetchone()
            assert r is not None and r[0] == g[0]

        def heartbeat(c, k):
            assert c.execute(HEARTBEAT, (k % WRITERS,)).fetchone() is not None

        for i, c in enumerate(conns):  # warm each backend (PL/pgSQL compiles on first call)
            for k in range(3):
                renew(c, i + k * CONNECTIONS)
                heartbeat(c, i + k * CONNECTIONS)
        hi0 = dict(admin.execute("SELECT grant_id, hi FROM idgen_registry_grant WHERE NOT reserved").fetchall())

        totals = {"renew": [0.0, 0, 0, [], 0], "heartbeat": [0.0, 0, 0, [], 0]}
        done = {"renew": 3 * CONNECTIONS, "heartbeat": 0}
        for r in range(rounds):  # alternate, the order rotating every round
            for name in (("renew", "heartbeat") if r % 2 == 0 else ("heartbeat", "renew")):
                out = phase(conns, pids, postmaster, rate, seconds / rounds,
                            renew if name == "renew" else heartbeat, done[name])
                done[name] += out[4]
                t = totals[name]
                for i in (0, 1, 2, 4):
                    t[i] += out[i]
                t[3] += out[3]
        moved = sum(1 for gid, hi in admin.execute(
            "SELECT grant_id, hi FROM idgen_registry_grant WHERE NOT reserved").fetchall() if hi > hi0[gid])
        for c in conns:
            c.close()

    ren, hb = totals["renew"], totals["heartbeat"]
    print(f"  {ren[4]} renewals in {ren[0]:.1f} s ({ren[4] / ren[0]:.2f}/s), {hb[4]} heartbeats in {hb[0]:.1f} s "
          f"({hb[4] / hb[0]:.2f}/s); {moved} of {len(grants)} grants' windows moved on")
    assert moved == min(len(grants), ren[4]), (moved, ren[4])
    row("server CPU, the 16 backends, share of one core", 100 * ren[1] / 1e9 / ren[0], 100 * hb[1] / 1e9 / hb[0], "%")
    row("server CPU, whole server (all processes), share of one core", 100 * ren[2] / TICK / ren[0],
        100 * max(hb[2], 1) / TICK / hb[0], "%")
    row("backend CPU per call", ren[1] / 1e6 / ren[4], hb[1] / 1e6 / hb[4], "ms")
    row("whole-server CPU per call", ren[2] / TICK * 1e3 / ren[4], max(hb[2], 1) / TICK * 1e3 / hb[4], "ms")
    row("latency at the client, median", statistics.median(ren[3]) * 1e3, statistics.median(hb[3]) * 1e3, "ms")
    row("latency at the client, p99", p(ren[3], 0.99) * 1e3, p(hb[3], 0.99) * 1e3, "ms")


if __name__ == "__main__":
    args = sys.argv[1:]
    secs = int(args[args.index("--seconds") + 1]) if "--seconds" in args else None
    run("--quick" in args, secs, "--superuser" in args)
