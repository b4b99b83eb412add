"""pg_idgen's portable SQL edition against the built-ins and the native edition (issue 37, "Measured").

Usage:
  bench/portable.py PORTABLE_DSN NATIVE_DSN [--quick] [--rounds N]
      PORTABLE_DSN: a database where the portable edition is installed in schema idgen, as its
      owner (the role that installed it); NATIVE_DSN: a database of the same cluster where the
      native extension is created (the cluster preloads it).
  bench/portable.py --cluster PGVERSION [--quick]
      starts a throwaway cluster of its own (scripts/lib.sh, $PG_IDGEN_CLUSTERS or
      /var/tmp/pg_idgen_bench_portable, port PORTABLE_BENCH_PORT or 54534), sets it up as
      tests/portable/run.sh does (a non-superuser owner of database app installs the plain
      script; database native has CREATE EXTENSION pg_idgen, which must already be installed in
      that PostgreSQL: nothing is installed into it), runs, and stops it.

What it prints, in one run (contenders alternate, the order rotating each round; best of N;
sections 1, 1b and 5 on the backends' CPU time when the server runs on this machine and its /proc is
readable, which other work on a shared machine disturbs much less than the wall clock):
  1. per id (one session, SELECT count(f()) FROM generate_series): portable gen_xid12() and
     gen_snowflake(), gen_random_uuid(), nextval(), native gen_xid12(); ratios portable xid12 /
     uuid (target <= 1.5x), portable xid12 / native xid12, portable snowflake / nextval (target
     <= 10x), and portable xid12 against the 8.6 us an id that issue 37 reports for modfin/pg-xid's
     xid() (target <= 0.5x; pg-xid itself is not measured here); gen_xid12(timestamptz) against
     gen_xid12();
  1b. per call (one id a statement, prepared, one round trip each): the same contenders, the
     backend's CPU time for the statements;
  2. an insert of ROWS rows with the id as the primary key's DEFAULT: portable xid12, native
     xid12, uuid gen_random_uuid(), bigint portable gen_snowflake(); times as ratios to uuid;
  3. pg_relation_size and pg_indexes_size of each of those tables;
  4. a page of 100 by cursor (id > $cursor ORDER BY id LIMIT 100, prepared) at 50 % depth,
     portable against native;
  5. where gen_xid12()'s time goes: functions of this run (pg_temp) that add its parts one at a
     time (a PL/pgSQL call; SECURITY DEFINER with SET search_path; the xid12 domain's check of
     the result; nextval(); the jump count read before and after it; the clock), each against
     gen_random_uuid() and gen_xid12() in one run.
Targets are printed beside their ratios (met / not met). Nothing asserts on timing: the
exit status is 0 unless something fails to run. --quick is a smoke-test scale (20k rows).
The tables (bench_portable_*) are dropped at the end.
"""
import argparse
import datetime
import os
import platform
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

try:
    import psycopg
except ImportError:  # --help works without it; a run needs it (the project's .venv has it)
    psycopg = None

ROOT = Path(__file__).resolve().parent.parent
PG_XID_US = 8.6  # modfin/pg-xid's xid(), us an id, as issue 37 reports it (not measured here)


@dataclass
class Scale:
    gen_calls: int  # ids per generate-only query
    gen_rounds: int
    rows: int  # rows of each insert
    insert_rounds: int
    page_reps: int  # pages fetched per round
    page_rounds: int


FULL = Scale(gen_calls=100_000, gen_rounds=7, rows=1_000_000, insert_rounds=3, page_reps=2_000, page_rounds=7)
QUICK = Scale(gen_calls=20_000, gen_rounds=3, rows=20_000, insert_rounds=1, page_reps=200, page_rounds=3)


def alternate(cases: dict, rounds: int, warmup: dict | None = None) -> dict[str, list[float]]:
    """Runs each case (a callable returning seconds) once to warm up, then `rounds` times,
    rotating the order every round so that no contender always runs first."""
    names = list(cases)
    for name in names:
        (warmup or cases)[name]()
    times: dict[str, list[float]] = {n: [] for n in names}
    for r in range(rounds):
        k = r % len(names)
        for name in names[k:] + names[:k]:
            times[name].append(cases[name]())
    return times


def q1(conn, sql: str, params=None):
    return conn.execute(sql, params).fetchone()[0]


def timer(conn, sql: str):
    def run() -> float:
        start = time.perf_counter()
        conn.execute(sql)
        return time.perf_counter() - start
    return run


def mark(met: bool) -> str:
    return "met" if met else "NOT MET"


def machine() -> str:
    model = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip() or "unknown"
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    return f"{model} x {os.cpu_count()}, kernel {platform.release()}, load {load}, commit {commit}"


def settle(conn) -> None:
    conn.add_notice_handler(lambda d: None)
    for k, v in {"jit": "off", "max_parallel_workers_per_gather": "0", "work_mem": "'256MB'",
                 "maintenance_work_mem": "'512MB'"}.items():
        conn.execute(f"SET {k} = {v}")


def checkpoint(conn) -> None:
    """A CHECKPOINT before each insert, so that each pays the same full-page images; skipped for
    a role that may not (before PostgreSQL 15, or without pg_checkpoint)."""
    try:
        conn.execute("CHECKPOINT")
    except psycopg.errors.InsufficientPrivilege:
        pass


def generate(p, n, s: Scale) -> tuple[dict[str, float], str]:
    """Best us an id of each generator, all alternating in one run."""
    count = s.gen_calls
    p.execute("DROP SEQUENCE IF EXISTS bench_portable_seq")
    p.execute("CREATE SEQUENCE bench_portable_seq")
    sql = "SELECT count({}) FROM generate_series(1, %d)" % count
    timer, what = cpu_timer(p, n)
    cases = {
        "gen_random_uuid()": timer(p, sql.format("gen_random_uuid()")),
        "nextval()": timer(p, sql.format("nextval('bench_portable_seq')")),
        "portable gen_xid12()": timer(p, sql.format("idgen.gen_xid12()")),
        "portable gen_snowflake()": timer(p, sql.format("idgen.gen_snowflake()")),
        "portable gen_xid12(timestamptz)": timer(p, sql.format("idgen.gen_xid12(now())")),
        "native gen_xid12()": timer(n, sql.format("gen_xid12()")),
    }
    t = alternate(cases, s.gen_rounds)
    p.execute("DROP SEQUENCE bench_portable_seq")
    return {k: min(v) / count * 1e6 for k, v in t.items()}, what


def per_call(p, s: Scale) -> tuple[dict[str, float], str]:
    """Best us a statement of one id each (SELECT f(), prepared, one round trip a call)."""
    p.execute("DROP SEQUENCE IF EXISTS bench_portable_seq")
    p.execute("CREATE SEQUENCE bench_portable_seq")
    calls = max(s.gen_calls // 50, 200)
    _, what = cpu_timer(p)
    path = schedstat(p) if what != "wall clock" else None

    def case(expr: str):
        def run() -> float:
            start = int(open(path).read().split()[0]) if path else time.perf_counter_ns()
            for _ in range(calls):
                p.execute(f"SELECT {expr}", prepare=True).fetchone()
            end = int(open(path).read().split()[0]) if path else time.perf_counter_ns()
            return (end - start) / 1e9
        return run
    cases = {"gen_random_uuid()": case("gen_random_uuid()"), "nextval()": case("nextval('bench_portable_seq')"),
             "portable gen_xid12()": case("idgen.gen_xid12()"), "portable gen_snowflake()": case("idgen.gen_snowflake()")}
    t = alternate(cases, s.gen_rounds)
    p.execute("DROP SEQUENCE bench_portable_seq")
    return {k: min(v) / calls * 1e6 for k, v in t.items()}, f"{calls:,} statements a round, {what}"


INSERTS = {  # name -> (connection: p or n, column type, default)
    "portable xid12": ("p", "idgen.xid12", "idgen.gen_xid12()"),
    "native xid12": ("n", "xid12", "gen_xid12()"),
    "uuid gen_random_uuid()": ("p", "uuid", "gen_random_uuid()"),
    "bigint portable gen_snowflake()": ("p", "bigint", "idgen.gen_snowflake()"),
}


def table(name: str) -> str:
    return "bench_portable_" + "".join(c if c.isalnum() else "_" for c in name.lower()).strip("_")


def insert(conns, s: Scale) -> tuple[dict[str, float], dict[str, tuple[int, int]]]:
    for name, (c, typ, default) in INSERTS.items():
        conn = conns[c]
        conn.execute(f"DROP TABLE IF EXISTS {table(name)}")
        conn.execute(f"CREATE TABLE {table(name)} (id {typ} PRIMARY KEY DEFAULT {default}, "
                     "n smallint NOT NULL, payload int NOT NULL)")

    def case(name: str, rows: int):
        conn, tb = conns[INSERTS[name][0]], table(name)
        sql = f"INSERT INTO {tb} (n, payload) SELECT g % 100, g FROM generate_series(1, {rows}) g"

        def run() -> float:
            conn.execute(f"TRUNCATE {tb}")
            checkpoint(conn)
            start = time.perf_counter()
            conn.execute(sql)
            return time.perf_counter() - start
        return run

    t = alternate({k: case(k, s.rows) for k in INSERTS}, s.insert_rounds,
                  warmup={k: case(k, max(s.rows // 20, 1000)) for k in INSERTS})
    sizes = {}
    for name, (c, _, _) in INSERTS.items():
        conn, tb = conns[c], table(name)
        conn.execute(f"VACUUM ANALYZE {tb}")
        sizes[name] = (q1(conn, "SELECT pg_relation_size(%s)", (tb,)), q1(conn, "SELECT pg_indexes_size(%s)", (tb,)))
    return {k: min(v) for k, v in t.items()}, sizes


def pages(conns, s: Scale) -> dict[str, float]:
    """Best us a page of 100 by cursor at 50 % depth, portable against native xid12."""
    cases = {}
    for name in ("portable xid12", "native xid12"):
        c, typ, _ = INSERTS[name]
        conn, tb = conns[c], table(name)
        cursor = q1(conn, f"SELECT id::text FROM {tb} ORDER BY id OFFSET {s.rows // 2} LIMIT 1")
        seek = f"SELECT id, payload FROM {tb} WHERE id > %s::{typ} ORDER BY id LIMIT 100"
        plan = "\n".join(r[0] for r in conn.execute(f"EXPLAIN (COSTS OFF) {seek}", (cursor,)))
        if "Index Scan" not in plan:
            print(f"note: the {name} page does not use the index:\n{plan}")

        def run(conn=conn, seek=seek, cursor=cursor) -> float:
            start = time.perf_counter()
            for _ in range(s.page_reps):
                rows = conn.execute(seek, (cursor,), prepare=True).fetchall()
            assert len(rows) == 100, len(rows)
            return (time.perf_counter() - start) / s.page_reps
        cases[name] = run
    t = alternate(cases, s.page_rounds)
    return {k: min(v) * 1e6 for k, v in t.items()}


GATE = "SECURITY DEFINER SET search_path = pg_catalog, pg_temp"
PARTS = {  # name -> (returns, options, body): each adds one part to one before it
    "a PL/pgSQL call": ("text", "", "RETURN '9m4e2mr0ui3e8a215n4g';"),
    "+ SECURITY DEFINER, SET search_path": ("text", GATE, "RETURN '9m4e2mr0ui3e8a215n4g';"),
    "+ xid12 domain check of the result": ("idgen.xid12", GATE, "RETURN '9m4e2mr0ui3e8a215n4g';"),
    "gate + nextval()": ("bigint", GATE, "RETURN pg_catalog.nextval('pg_temp.bench_parts_seq'::pg_catalog.regclass);"),
    "+ the jump count, read before and after": ("bigint", GATE, """
        j := pg_catalog.pg_sequence_last_value('pg_temp.bench_parts_jumps'::pg_catalog.regclass);
        v := pg_catalog.nextval('pg_temp.bench_parts_seq'::pg_catalog.regclass);
        IF j IS DISTINCT FROM pg_catalog.pg_sequence_last_value('pg_temp.bench_parts_jumps'::pg_catalog.regclass)
           OR (j & 1) = 1 THEN
            v := -1;
        END IF;
        RETURN v;"""),
    "gate + the clock": ("bigint", GATE, "RETURN pg_catalog.floor(pg_catalog.date_part('epoch', pg_catalog.clock_timestamp()))::bigint;"),
}
PART_BASE = {  # what each part adds to
    "+ SECURITY DEFINER, SET search_path": "a PL/pgSQL call",
    "+ xid12 domain check of the result": "+ SECURITY DEFINER, SET search_path",
    "gate + nextval()": "+ SECURITY DEFINER, SET search_path",
    "+ the jump count, read before and after": "gate + nextval()",
    "gate + the clock": "+ SECURITY DEFINER, SET search_path",
}


def schedstat(conn) -> str | None:
    """The /proc file with the backend's CPU time, when the server runs here and it is readable."""
    path = f"/proc/{q1(conn, 'SELECT pg_backend_pid()')}/schedstat"
    try:
        open(path).read()
    except OSError:
        return None
    return path


def cpu_timer(*conns):
    """A timer of the backend's CPU time (/proc/PID/schedstat: less disturbed by other work on a
    shared machine than the wall clock) when every connection's server runs here and its /proc is
    readable; the wall clock's timer otherwise. Returns (make_timer, what it measures)."""
    if not all(schedstat(c) for c in conns):
        return timer, "wall clock"

    def make(conn, sql: str):
        path = schedstat(conn)

        def run() -> float:
            start = int(open(path).read().split()[0])
            conn.execute(sql)
            return (int(open(path).read().split()[0]) - start) / 1e9
        return run
    return make, "the backends' CPU time"


def parts(p, s: Scale) -> tuple[dict[str, float], str]:
    """Best us an id of each part's function, gen_random_uuid() and gen_xid12(), alternating."""
    p.execute("CREATE TEMP SEQUENCE IF NOT EXISTS bench_parts_seq")
    p.execute("CREATE TEMP SEQUENCE IF NOT EXISTS bench_parts_jumps START 2 INCREMENT 2")
    p.execute("SELECT nextval('pg_temp.bench_parts_jumps')")
    sql = "SELECT count({}) FROM generate_series(1, %d)" % s.gen_calls
    timer, what = cpu_timer(p)
    cases = {"gen_random_uuid()": timer(p, sql.format("gen_random_uuid()")),
             "portable gen_xid12()": timer(p, sql.format("idgen.gen_xid12()"))}
    for i, (name, (returns, options, body)) in enumerate(PARTS.items()):
        p.execute(f"CREATE OR REPLACE FUNCTION pg_temp.bench_part_{i}() RETURNS {returns} LANGUAGE plpgsql {options} AS $b$"
                  f" DECLARE v bigint; j bigint; BEGIN {body} END $b$")
        cases[name] = timer(p, sql.format(f"pg_temp.bench_part_{i}()"))
    t = alternate(cases, s.gen_rounds)
    return {k: min(v) / s.gen_calls * 1e6 for k, v in t.items()}, what


def run(pdsn: str, ndsn: str, s: Scale, quick: bool) -> None:
    started = time.perf_counter()
    host = machine()
    with psycopg.connect(pdsn, autocommit=True) as p, psycopg.connect(ndsn, autocommit=True) as n:
        settle(p)
        settle(n)
        version = q1(p, "SELECT current_setting('server_version')")
        pver = q1(p, "SELECT idgen.idgen_portable_version()")
        nver = q1(n, "SELECT extversion FROM pg_extension WHERE extname = 'pg_idgen'")
        if nver is None:
            sys.exit("the native DSN's database has no pg_idgen extension")
        who = q1(p, "SELECT current_user || CASE WHEN rolsuper THEN ', a superuser' ELSE ', not a superuser' END "
                 "FROM pg_roles WHERE rolname = current_user")
        if q1(p, "SELECT worker_id IS NULL FROM idgen.idgen_config"):
            p.execute("UPDATE idgen.idgen_config SET worker_id = 1")
            p.execute("SELECT idgen.idgen_config_reload()")
            print("note: idgen.idgen_config.worker_id was unset; set to 1 for gen_snowflake()")
        print(f"pg_idgen portable {pver} (as {who}) against native {nver}, PostgreSQL {version}, "
              f"scale {'quick' if quick else 'full'}; {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC")
        print(f"machine: {host}", flush=True)

        t0 = time.perf_counter()
        us, what = generate(p, n, s)
        print(f"\n1. per id: {s.gen_calls:,} ids a query, one session, best of {s.gen_rounds}, {what} "
              f"({time.perf_counter() - t0:.0f} s)")
        for k, v in us.items():
            print(f"  {k:26} {v:6.2f} us")
        xu = us["portable gen_xid12()"] / us["gen_random_uuid()"]
        xn = us["portable gen_xid12()"] / us["native gen_xid12()"]
        xp = us["portable gen_xid12()"] / PG_XID_US
        sn = us["portable gen_snowflake()"] / us["nextval()"]
        print(f"  portable gen_xid12 / gen_random_uuid      {xu:6.2f}x   target <= 1.5x: {mark(xu <= 1.5)}")
        print(f"  portable gen_xid12 / native gen_xid12     {xn:6.1f}x")
        print(f"  portable gen_xid12 / pg-xid's 8.6 us      {xp:6.2f}x   target <= 0.5x: {mark(xp <= 0.5)} "
              "(8.6 us: the figure issue 37 reports; pg-xid not measured here)")
        print(f"  portable gen_snowflake / nextval          {sn:6.2f}x   target <= 10x: {mark(sn <= 10)}")
        print(f"  portable gen_xid12(timestamptz) / gen_xid12() "
              f"{us['portable gen_xid12(timestamptz)'] / us['portable gen_xid12()']:6.2f}x", flush=True)

        t0 = time.perf_counter()
        us, what = per_call(p, s)
        print(f"\n1b. per call: one id a statement (SELECT f(), prepared), best of {s.gen_rounds}, {what} "
              f"({time.perf_counter() - t0:.0f} s)")
        for k, v in us.items():
            print(f"  {k:26} {v:6.2f} us")
        print(f"  portable gen_xid12 / gen_random_uuid      {us['portable gen_xid12()'] / us['gen_random_uuid()']:6.2f}x"
              f"   target <= 1.5x: {mark(us['portable gen_xid12()'] / us['gen_random_uuid()'] <= 1.5)}")
        print(f"  portable gen_snowflake / nextval          {us['portable gen_snowflake()'] / us['nextval()']:6.2f}x",
              flush=True)

        t0 = time.perf_counter()
        conns = {"p": p, "n": n}
        times, sizes = insert(conns, s)
        print(f"\n2. insert {s.rows:,} rows, the id the primary key's DEFAULT, best of {s.insert_rounds} "
              f"({time.perf_counter() - t0:.0f} s)")
        base = times["uuid gen_random_uuid()"]
        for k, v in times.items():
            print(f"  {k:32} {v:7.2f} s   {v / base:5.2f}x uuid")
        print(f"  portable xid12 / native xid12    {times['portable xid12'] / times['native xid12']:7.2f}x")
        print("\n3. sizes after the insert (pg_relation_size, pg_indexes_size)")
        for k, (heap, idx) in sizes.items():
            print(f"  {k:32} table {heap // 1024:>9,} kB   indexes {idx // 1024:>9,} kB")

        t0 = time.perf_counter()
        page = pages(conns, s)
        print(f"\n4. page of 100 by cursor (id > $cursor ORDER BY id LIMIT 100, at 50 % depth), "
              f"{s.page_reps} pages a round, best of {s.page_rounds} ({time.perf_counter() - t0:.0f} s)")
        for k, v in page.items():
            print(f"  {k:32} {v:7.1f} us")
        print(f"  portable / native                {page['portable xid12'] / page['native xid12']:7.2f}x")

        for name, (c, _, _) in INSERTS.items():
            conns[c].execute(f"DROP TABLE {table(name)}")

        t0 = time.perf_counter()
        us, what = parts(p, s)
        uuid, xid = us["gen_random_uuid()"], us["portable gen_xid12()"]
        print(f"\n5. where gen_xid12's time goes: functions adding its parts, {s.gen_calls:,} calls a query, "
              f"best of {s.gen_rounds}, {what} ({time.perf_counter() - t0:.0f} s)")
        for k, v in us.items():
            added = f"{v - us[PART_BASE[k]]:+6.2f} us" if k in PART_BASE else ""
            print(f"  {k:36} {v:6.2f} us  {added}")
        required = (us["+ the jump count, read before and after"]
                    + us["+ xid12 domain check of the result"] - us[PART_BASE["+ xid12 domain check of the result"]]
                    + us["gate + the clock"] - us[PART_BASE["gate + the clock"]])
        print(f"  the gate's required parts together  {required:6.2f} us  ({required / uuid:.2f}x gen_random_uuid)")
        print(f"  gen_xid12 adds its lookups and text: {xid - required:+.2f} us")
    print(f"\n{time.perf_counter() - started:.0f} s in all; no timing assertions (a shared machine: read the ratios)")


def with_cluster(major: str, s: Scale, quick: bool) -> None:
    """Starts a throwaway cluster as tests/portable/run.sh does and runs the benchmark in it."""
    port = os.environ.get("PORTABLE_BENCH_PORT", "54534")
    env = dict(os.environ, PG_IDGEN_LOCKED=os.environ.get("PG_IDGEN_LOCKED", "1"),
               PG_IDGEN_CLUSTERS=os.environ.get("PG_IDGEN_CLUSTERS", "/var/tmp/pg_idgen_bench_portable"))
    lib = f"source {ROOT}/scripts/lib.sh; use_private_postgres {major}; "
    setup = lib + f"""set -euo pipefail
        start_cluster benchportable {port} preload
        SOCK=$(socket_dir benchportable)
        psql_at benchportable {port} postgres -c "CREATE ROLE idgen_owner LOGIN NOSUPERUSER NOCREATEROLE NOCREATEDB" \\
            -c "CREATE DATABASE app OWNER idgen_owner" -c "CREATE DATABASE native"
        psql_at benchportable {port} native -c "CREATE EXTENSION pg_idgen"
        "$BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -h "$SOCK" -p {port} -U idgen_owner -d app -v schema=idgen \\
            -f "{ROOT}/portable/dist/pg_idgen_portable--$(extension_version).sql"
        echo "$SOCK"
    """
    try:
        sock = subprocess.run(["bash", "-c", setup], env=env, check=True, stdout=subprocess.PIPE,
                              text=True).stdout.strip().splitlines()[-1]
        run(f"host={sock} port={port} user=idgen_owner dbname=app",
            f"host={sock} port={port} user=postgres dbname=native", s, quick)
    finally:
        subprocess.run(["bash", "-c", lib + "stop_cluster benchportable"], env=env, check=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("portable_dsn", nargs="?")
    ap.add_argument("native_dsn", nargs="?")
    ap.add_argument("--cluster", metavar="PGVERSION", help="start a throwaway cluster of this major and set it up")
    ap.add_argument("--quick", action="store_true", help="smoke-test scale (20k rows, under 30 s)")
    ap.add_argument("--rounds", type=int, help="rounds of the per-id and page measurements (best of N)")
    args = ap.parse_args()
    if psycopg is None:
        sys.exit("bench/portable.py needs psycopg: run it with the project's .venv/bin/python")
    s = QUICK if args.quick else FULL
    if args.rounds:
        s.gen_rounds = s.page_rounds = args.rounds
    if args.cluster:
        with_cluster(args.cluster, s, args.quick)
    elif args.portable_dsn and args.native_dsn:
        run(args.portable_dsn, args.native_dsn, s, args.quick)
    else:
        ap.error("give PORTABLE_DSN NATIVE_DSN, or --cluster PGVERSION")


if __name__ == "__main__":
    main()
