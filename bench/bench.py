"""pg_idgen benchmarks: pg_idgen's ids against what a user would pick instead.

Usage: bash scripts/bench.sh VERSION [--quick] [--out DIR]
  (bench.sh builds a release version, starts a throwaway preloaded cluster and runs this.)

Every workload measures its contenders alternately in the same run (the order rotates from one
round to the next), after a warm-up, and reports medians. A ratio is the median of the per-round
ratios against a contender measured in the same round, which the drift of a shared, noisy
machine disturbs less than a ratio of medians. Sizes are in bytes. The full scale writes
BENCHMARKS.md and docs/benchmarks.png; --quick (a smoke test, no timing assertions) writes them
into a temporary directory unless --out is given.
"""
import argparse
import datetime
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

HOST = os.environ["PG_IDGEN_HOST"]
PORT = os.environ["PG_IDGEN_PORT"]
BINDIR = os.environ["PG_IDGEN_BINDIR"]
DSN = f"host={HOST} port={PORT} user=postgres dbname=postgres"
ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Scale:
    rows: int  # rows of the insert, sort, COPY, pagination and time-range tables
    gen_calls: int  # calls per generate-only query
    rounds: int  # measured rounds per workload (the median is reported)
    big_rounds: int  # rounds for the big inserts, sorts and COPYs (and pgbench runs per case)
    pgbench_seconds: int
    pgbench_clients: list[int]
    page_reps: int  # pages fetched per round for the cursor pagination
    range_reps: int  # queries per round for the time range and prefix scans


FULL = Scale(rows=2_000_000, gen_calls=3_000_000, rounds=5, big_rounds=3, pgbench_seconds=3,
             pgbench_clients=[1, 2, 4, 8], page_reps=300, range_reps=30)
QUICK = Scale(rows=20_000, gen_calls=50_000, rounds=2, big_rounds=1, pgbench_seconds=1,
              pgbench_clients=[1, 8], page_reps=20, range_reps=3)


@dataclass
class Row:
    workload: str
    case: str
    contender: str
    value: float
    unit: str
    ratio: float | None = None  # against `versus`, median of per-round ratios
    versus: str = ""
    target: str = ""
    met: bool | None = None


@dataclass
class Results:
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    chart: dict = field(default_factory=dict)  # series for the chart
    explains: list[tuple[str, str]] = field(default_factory=list)

    def add(self, *args, **kw) -> Row:
        row = Row(*args, **kw)
        self.rows.append(row)
        return row


R = Results()


def median_ratio(a: list[float], b: list[float]) -> float:
    return statistics.median(x / y for x, y in zip(a, b))


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


def timer(conn, sql: str, params=None, before=None):
    def run() -> float:
        if before:
            for statement in before:
                conn.execute(statement)
        start = time.perf_counter()
        conn.execute(sql, params)
        return time.perf_counter() - start
    return run


def repeat(conn, sql: str, params, reps: int):
    """Runs one prepared query `reps` times; seconds per query."""
    def run() -> float:
        start = time.perf_counter()
        for _ in range(reps):
            conn.execute(sql, params, prepare=True).fetchall()
        return (time.perf_counter() - start) / reps
    return run


def q1(conn, sql: str, params=None):
    return conn.execute(sql, params).fetchone()[0]


def verdict(value: float, limit: float, at_least: bool = False) -> bool:
    return value >= limit if at_least else value <= limit


# 1. Generate only --------------------------------------------------------------------------

def pgbench(script: str, clients: int, seconds: int) -> float:
    """Transactions per second of `script` (prepared statements, so that parsing does not hide
    the cost of the call itself)."""
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
        f.write(script + "\n")
    cmd = [os.path.join(BINDIR, "pgbench"), "-n", "-M", "prepared", "-h", HOST, "-p", PORT,
           "-U", "postgres", "-c", str(clients), "-j", str(min(clients, 2)), "-T", str(seconds),
           "-f", f.name, "postgres"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    os.unlink(f.name)
    for line in out.splitlines():
        if line.startswith("tps ="):
            return float(line.split()[2])
    raise RuntimeError(out)


def generate(conn, s: Scale, gens: dict[str, str]) -> None:
    w = "1 generate"
    n = s.gen_calls
    cases = {"bare series": f"SELECT count(*) FROM generate_series(1, {n})",
             "clock_timestamp()": f"SELECT count(clock_timestamp()) FROM generate_series(1, {n})"}
    cases.update({name: f"SELECT count({expr}) FROM generate_series(1, {n})" for name, expr in gens.items()})
    cases["nextval(seq)"] = f"SELECT count(nextval('bench_seq')) FROM generate_series(1, {n})"
    conn.execute("DROP SEQUENCE IF EXISTS bench_seq")
    conn.execute("CREATE SEQUENCE bench_seq")
    t = alternate({k: timer(conn, v) for k, v in cases.items()}, s.rounds)
    case = f"{n:,} calls in one session, ns per id"
    for name in cases:
        row = R.add(w, case, name, statistics.median(t[name]) / n * 1e9, "ns/id")
        if name not in ("bare series", "gen_random_uuid()"):
            row.ratio, row.versus = median_ratio(t[name], t["gen_random_uuid()"]), "gen_random_uuid()"
        if name == "gen_xid12()":
            row.target = "<= 0.2x gen_random_uuid()"
            row.met = row.ratio <= 0.2
    R.chart["generate"] = {k: statistics.median(t[k]) / n * 1e9 for k in cases if k != "bare series"}
    if "uuidv7()" in t:
        r = median_ratio(t["gen_xid12()"], t["uuidv7()"])
        R.add(w, case, "gen_xid12()", statistics.median(t["gen_xid12()"]) / n * 1e9, "ns/id", r, "uuidv7()",
              "<= 0.2x uuidv7()", r <= 0.2)
    # Cost per id above the bare series, against clock_timestamp()'s.
    above = [(g - b) / (c - b) for g, b, c in zip(t["gen_xid12()"], t["bare series"], t["clock_timestamp()"])]
    r = statistics.median(above)
    per_id = (statistics.median(t["gen_xid12()"]) - statistics.median(t["bare series"])) / n * 1e9
    R.add(w, "cost per id above the bare series", "gen_xid12()", per_id, "ns/id", r, "clock_timestamp()",
          "<= 1.5x clock_timestamp()", r <= 1.5)
    above = [(g - b) / (c - b) for g, b, c in zip(t["gen_snowflake()"], t["bare series"], t["clock_timestamp()"])]
    per_id = (statistics.median(t["gen_snowflake()"]) - statistics.median(t["bare series"])) / n * 1e9
    R.add(w, "cost per id above the bare series", "gen_snowflake()", per_id, "ns/id", statistics.median(above),
          "clock_timestamp()")
    # The format's cap is 4096 ids per millisecond of the ids' own clock. A query's wall time
    # also holds generate_series materializing its rows before the first call, so the rate
    # against the format is read from the ids: how many there are per millisecond they span.
    wall = statistics.median(n / x / 1000 for x in t["gen_snowflake()"])
    R.add(w, "Snowflake ids per ms of query time, series included", "gen_snowflake()", wall, "ids/ms")
    span_sql = f"""SELECT count(*)::float8 / (max(x >> 22) - min(x >> 22) + 1)
                   FROM (SELECT gen_snowflake() AS x FROM generate_series(1, {n})) s"""
    rate = statistics.median(q1(conn, span_sql) for _ in range(s.rounds))
    R.add(w, "Snowflake ids per ms they span, one session (format: 4096)", "gen_snowflake()", rate, "ids/ms",
          rate / 4096, "4096/ms", ">= 0.8x 4096/ms", rate >= 0.8 * 4096)
    conn.execute("DROP SEQUENCE bench_seq")

    # Concurrency: 1000 ids per statement, then one id per statement (latency).
    bench_gens = {k: v for k, v in gens.items() if k in ("gen_xid12()", "gen_random_uuid()", "uuidv7()", "gen_snowflake()")}
    for batch in (1000, 1):
        client_counts = s.pgbench_clients if batch == 1000 else [1, max(s.pgbench_clients)]
        for clients in client_counts:
            scripts = {k: (f"SELECT count({v}) FROM generate_series(1, 1000);" if batch == 1000 else f"SELECT {v};")
                       for k, v in bench_gens.items()}
            tps: dict[str, list[float]] = {k: [] for k in scripts}
            names = list(scripts)
            for r in range(2 if s.big_rounds > 1 else 1):
                for name in (names if r % 2 == 0 else names[::-1]):
                    tps[name].append(pgbench(scripts[name], clients, s.pgbench_seconds))
            base = "gen_random_uuid()"
            for name in names:
                m = statistics.median(tps[name])
                ratio = median_ratio(tps[name], tps[base]) if name != base else None
                if batch == 1000:
                    row = R.add(w, f"pgbench {clients} client(s), 1000 ids per statement, total ids/s", name,
                                m * 1000, "ids/s", ratio, base if ratio else "")
                    if name == "gen_xid12()" and clients == 8:
                        row.target, row.met = ">= 4x gen_random_uuid()", ratio >= 4
                    R.chart.setdefault("pgbench", {}).setdefault(name, {})[clients] = m * 1000
                else:
                    R.add(w, f"pgbench {clients} client(s), one id per statement, latency", name,
                          clients / m * 1e6, "us", (1 / ratio) if ratio else None, base if ratio else "")


# 2. Insert with a primary key --------------------------------------------------------------

def insert(conn, s: Scale, schemes: dict[str, tuple[str, str]]) -> None:
    """schemes: name -> (column type, default expression or 'identity')."""
    w = "2 insert"
    n = s.rows
    wal: dict[str, list[int]] = {k: [] for k in schemes}

    def table(name: str) -> str:
        return "bench_ins_" + "".join(c if c.isalnum() else "_" for c in name.lower()).strip("_")

    for name, (typ, default) in schemes.items():
        conn.execute(f"DROP TABLE IF EXISTS {table(name)} CASCADE")
        column = (f"id {typ} GENERATED ALWAYS AS IDENTITY PRIMARY KEY" if default == "identity"
                  else f"id {typ} PRIMARY KEY DEFAULT {default}")
        conn.execute(f"CREATE TABLE {table(name)} ({column}, n smallint NOT NULL, payload int NOT NULL)")

    def case(name: str, rows: int, record: bool):
        t = table(name)
        sql = f"INSERT INTO {t} (n, payload) SELECT g % 100, g FROM generate_series(1, {rows}) g"

        def run() -> float:
            conn.execute(f"TRUNCATE {t}")
            conn.execute("CHECKPOINT")  # each insert pays the same full-page images
            before = q1(conn, "SELECT pg_current_wal_lsn()")
            start = time.perf_counter()
            conn.execute(sql)
            seconds = time.perf_counter() - start
            if record:
                wal[name].append(q1(conn, "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), %s)::bigint", (before,)))
            return seconds
        return run

    t = alternate({k: case(k, n, True) for k in schemes}, s.big_rounds,
                  warmup={k: case(k, max(n // 20, 1000), False) for k in schemes})
    base = "uuidv7()" if "uuidv7()" in schemes else "uuid gen_random_uuid()"
    sizes = {}
    for name in schemes:
        tb = table(name)
        heap = q1(conn, "SELECT pg_relation_size(%s)", (tb,))
        pk = q1(conn, "SELECT pg_relation_size(%s)", (tb + "_pkey",))
        sizes[name] = {"heap": heap, "primary key": pk}
        m = statistics.median(t[name])
        row = R.add(w, f"insert {n:,} rows, PK DEFAULT generator: time", name, m, "s",
                    median_ratio(t[name], t[base]) if name != base else None, base if name != base else "")
        if name == "xid12 gen_xid12()":
            row.target, row.met = f"<= 0.6x {base}", row.ratio <= 0.6
            r = median_ratio(t[name], t["bigint identity"])
            R.add(w, f"insert {n:,} rows, PK DEFAULT generator: time", name, m, "s", r, "bigint identity",
                  "<= 1.3x bigint identity", r <= 1.3)
        R.add(w, "heap size", name, heap, "bytes")
        R.add(w, "primary-key index size", name, pk, "bytes")
        R.add(w, "WAL of the insert", name, statistics.median(wal[name]), "bytes")
    R.chart["insert"] = {k: statistics.median(v) for k, v in t.items()}

    # The composite index (id, n) and a foreign key: where 12 bytes pad like 16, and where not.
    for name in schemes:
        tb = table(name)
        conn.execute(f"CREATE INDEX {tb}_comp ON {tb} (id, n)")
        conn.execute(f"DROP TABLE IF EXISTS {tb}_child")
        conn.execute(f"CREATE TABLE {tb}_child (parent {schemes[name][0]} NOT NULL, qty smallint NOT NULL)")
        conn.execute(f"INSERT INTO {tb}_child SELECT id, n FROM {tb}")
        start = time.perf_counter()
        conn.execute(f"ALTER TABLE {tb}_child ADD FOREIGN KEY (parent) REFERENCES {tb} (id)")
        fk_seconds = time.perf_counter() - start
        conn.execute(f"CREATE INDEX {tb}_child_parent ON {tb}_child (parent)")
        sizes[name]["(id, n) index"] = q1(conn, "SELECT pg_relation_size(%s)", (tb + "_comp",))
        sizes[name]["child heap"] = q1(conn, "SELECT pg_relation_size(%s)", (tb + "_child",))
        sizes[name]["child FK index"] = q1(conn, "SELECT pg_relation_size(%s)", (tb + "_child_parent",))
        R.add(w, "composite index (id, smallint) size", name, sizes[name]["(id, n) index"], "bytes")
        R.add(w, "child table (FK column + smallint) heap size", name, sizes[name]["child heap"], "bytes")
        R.add(w, "child's index on the FK column size", name, sizes[name]["child FK index"], "bytes")
        R.add(w, "ADD FOREIGN KEY validation (once)", name, fk_seconds, "s")
        conn.execute(f"DROP TABLE {tb}_child")
        conn.execute(f"DROP INDEX {tb}_comp")
    R.chart["sizes"] = sizes
    # Keep the xid12, uuid and bigint tables for the pagination workload.
    R.chart["insert_tables"] = {k: table(k) for k in schemes}


# 3. Sort and CREATE INDEX; 4. COPY ---------------------------------------------------------

def sort_and_copy(conn, s: Scale, has_uuidv7: bool) -> None:
    n = s.rows
    sources = {
        "xid12, one backend (burst)": "SELECT x FROM (SELECT gen_xid12() AS x FROM generate_series(1, {n})) s ORDER BY random()",
        "xid12, spread over a year": "SELECT gen_xid12(now() - random() * interval '365 days') AS x FROM generate_series(1, {n})",
        "xid12, 64 machines x 65536 pids, one hour":
            "SELECT xid12_from_parts(timestamptz '2026-01-01' + random() * interval '1 hour', "
            "decode(lpad(to_hex((random() * 63)::int), 6, '0'), 'hex'), (random() * 65535)::int, "
            "(random() * 16777215)::int) AS x FROM generate_series(1, {n})",
        "uuid gen_random_uuid()": "SELECT gen_random_uuid() AS x FROM generate_series(1, {n})",
        "bigint (random order)": "SELECT g::bigint AS x FROM generate_series(1, {n}) g ORDER BY random()",
        'xid text, text COLLATE "C"': 'SELECT gen_xid12(now() - random() * interval \'365 days\')::text COLLATE "C" AS x FROM generate_series(1, {n})',
        "xid bytea": "SELECT gen_xid12(now() - random() * interval '365 days')::bytea AS x FROM generate_series(1, {n})",
    }
    if has_uuidv7:
        sources["uuid uuidv7() (burst)"] = "SELECT x FROM (SELECT uuidv7() AS x FROM generate_series(1, {n})) s ORDER BY random()"
    tables = {}
    for i, (name, sql) in enumerate(sources.items()):
        tables[name] = f"bench_sort_{i}"
        conn.execute(f"DROP TABLE IF EXISTS bench_sort_{i}")
        conn.execute(f"CREATE TABLE bench_sort_{i} AS {sql.format(n=n)}")
        conn.execute(f"VACUUM ANALYZE bench_sort_{i}")
    base = "uuid gen_random_uuid()"

    w = "3 sort"
    t = alternate({k: timer(conn, f"SELECT * FROM (SELECT x FROM {tb} ORDER BY x) s OFFSET {n}") for k, tb in tables.items()},
                  s.big_rounds)
    ti = alternate({k: timer(conn, f"CREATE INDEX bench_sort_ix ON {tb} (x)", before=["DROP INDEX IF EXISTS bench_sort_ix"])
                    for k, tb in tables.items()}, s.big_rounds)
    conn.execute("DROP INDEX IF EXISTS bench_sort_ix")
    for what, times in ((f"sort {n:,} random-order values", t), (f"CREATE INDEX on {n:,} random-order values", ti)):
        for name in tables:
            row = R.add(w, what, name, statistics.median(times[name]), "s",
                        median_ratio(times[name], times[base]) if name != base else None, base if name != base else "")
            if name.startswith("xid12"):
                row.target, row.met = "<= 1.1x uuid", row.ratio <= 1.1

    w = "4 COPY"
    datadir = q1(conn, "SELECT current_setting('data_directory')")
    copy_tables = {k: v for k, v in tables.items() if k in
                   ("xid12, spread over a year", "uuid gen_random_uuid()", "bigint (random order)", 'xid text, text COLLATE "C"', "xid bytea")}
    for fmt in ("text", "binary"):
        for name, tb in copy_tables.items():
            conn.execute(f"COPY {tb} TO '{datadir}/bench_copy_{tb}.{fmt}' (FORMAT {fmt})")
            conn.execute(f"DROP TABLE IF EXISTS {tb}_in")
            conn.execute(f"CREATE TABLE {tb}_in (LIKE {tb})")
        out = alternate({k: timer(conn, f"COPY {tb} TO '/dev/null' (FORMAT {fmt})") for k, tb in copy_tables.items()}, s.big_rounds)
        into = alternate({k: timer(conn, f"COPY {tb}_in FROM '{datadir}/bench_copy_{tb}.{fmt}' (FORMAT {fmt})",
                                   before=[f"TRUNCATE {tb}_in"]) for k, tb in copy_tables.items()}, s.big_rounds)
        for what, times in ((f"COPY TO of {n:,} values, {fmt}", out), (f"COPY FROM of {n:,} values, {fmt}", into)):
            for name in copy_tables:
                row = R.add(w, what, name, statistics.median(times[name]), "s",
                            median_ratio(times[name], times[base]) if name != base else None, base if name != base else "")
                if name.startswith("xid12") and fmt == "text":
                    row.target, row.met = "<= 1.0x uuid", row.ratio <= 1.0
        for name, tb in copy_tables.items():
            conn.execute(f"DROP TABLE {tb}_in")
    # The COPY files stay in the data directory of the throwaway cluster.
    for tb in tables.values():
        conn.execute(f"DROP TABLE {tb}")


# 5. Pagination -----------------------------------------------------------------------------

def pagination(conn, s: Scale, schemes: dict[str, str]) -> None:
    """schemes: name -> the id column's type."""
    w = "5 pagination"
    n = s.rows
    for name, typ in schemes.items():
        tb = R.chart["insert_tables"][name]
        conn.execute(f"VACUUM ANALYZE {tb}")
        cursors = {}
        for depth in (0.01, 0.99):
            cursors[depth] = q1(conn, f"SELECT id::text FROM {tb} ORDER BY id OFFSET {int(n * depth)} LIMIT 1")
        seek = f"SELECT id, payload FROM {tb} WHERE id > %s::{typ} ORDER BY id LIMIT 100"
        offset = f"SELECT id, payload FROM {tb} ORDER BY id OFFSET %s LIMIT 100"
        t = alternate({"1%": repeat(conn, seek, (cursors[0.01],), s.page_reps),
                       "99%": repeat(conn, seek, (cursors[0.99],), s.page_reps)}, s.rounds)
        o = alternate({"1%": repeat(conn, offset, (int(n * 0.01),), max(s.page_reps // 100, 2)),
                       "99%": repeat(conn, offset, (int(n * 0.99),), 2)}, max(s.rounds // 2, 1))
        R.add(w, "page of 100 by cursor (id > $cursor) at 1% depth", name, statistics.median(t["1%"]) * 1e6, "us")
        row = R.add(w, "page of 100 by cursor (id > $cursor) at 99% depth", name, statistics.median(t["99%"]) * 1e6, "us",
                    median_ratio(t["99%"], t["1%"]), "the same at 1%")
        if name.startswith("xid12"):
            row.target, row.met = "<= 2x the page at 1%", row.ratio <= 2
            plan = conn.execute(f"EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) {seek}", (cursors[0.99],)).fetchall()
            R.explains.append((f"cursor page at 99% depth, {name}", "\n".join(r[0] for r in plan)))
        R.add(w, "page of 100 by OFFSET at 1% depth", name, statistics.median(o["1%"]) * 1e6, "us")
        R.add(w, "page of 100 by OFFSET at 99% depth", name, statistics.median(o["99%"]) * 1e6, "us",
              median_ratio(o["99%"], o["1%"]), "the same at 1%")


# 6. Time range -----------------------------------------------------------------------------

def time_range(conn, s: Scale) -> None:
    w = "6 time range"
    n = s.rows
    span = "30 days"
    conn.execute("DROP TABLE IF EXISTS bench_ev_bt, bench_ev_brin")
    # Rows arrive in time order, as they would in a table whose ids are made at insert.
    conn.execute(f"""CREATE TABLE bench_ev_bt AS SELECT gen_xid12(ts) AS id, ts AS created_at, g AS payload
        FROM (SELECT g, timestamptz '2026-01-01' + (g - 1) * (interval '{span}' / {n}) AS ts
              FROM generate_series(1, {n}) g) s""")
    conn.execute("CREATE TABLE bench_ev_brin AS SELECT * FROM bench_ev_bt")
    conn.execute("CREATE INDEX bench_ev_bt_id ON bench_ev_bt (id)")
    conn.execute("CREATE INDEX bench_ev_bt_at ON bench_ev_bt (created_at)")
    conn.execute("CREATE INDEX bench_ev_brin_id ON bench_ev_brin USING brin (id)")
    conn.execute("VACUUM ANALYZE bench_ev_bt, bench_ev_brin")
    t0 = "2026-01-16 12:00:00+00"
    t1 = "2026-01-16 13:00:00+00"
    queries = {
        "created_at btree": "SELECT count(*), sum(payload) FROM bench_ev_bt WHERE created_at >= %s::timestamptz AND created_at < %s::timestamptz",
        "xid12 btree, xid12_min/max": "SELECT count(*), sum(payload) FROM bench_ev_bt WHERE id >= xid12_min(%s::timestamptz) AND id < xid12_min(%s::timestamptz)",
        "xid12 BRIN, xid12_min/max": "SELECT count(*), sum(payload) FROM bench_ev_brin WHERE id >= xid12_min(%s::timestamptz) AND id < xid12_min(%s::timestamptz)",
    }
    counts = {k: conn.execute(q, (t0, t1)).fetchone()[0] for k, q in queries.items()}
    assert len(set(counts.values())) == 1, counts
    t = alternate({k: repeat(conn, q, (t0, t1), s.range_reps) for k, q in queries.items()}, s.rounds)
    base = "created_at btree"
    for name, q in queries.items():
        R.add(w, f"one hour ({counts[name]:,} of {n:,} rows over {span}): count and sum", name,
              statistics.median(t[name]) * 1e6, "us", median_ratio(t[name], t[base]) if name != base else None,
              base if name != base else "")
        plan = conn.execute("EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) " + q, (t0, t1)).fetchall()
        R.explains.append((f"one hour, {name}", "\n".join(r[0] for r in plan)))
    for name, ix in (("created_at btree", "bench_ev_bt_at"), ("xid12 btree", "bench_ev_bt_id"), ("xid12 BRIN", "bench_ev_brin_id")):
        R.add(w, "index size", name, q1(conn, "SELECT pg_relation_size(%s)", (ix,)), "bytes")
    conn.execute("DROP TABLE bench_ev_bt, bench_ev_brin")


# 7. rapkey ---------------------------------------------------------------------------------

def rapkey(conn, s: Scale) -> None:
    w = "7 rapkey"
    n = max(s.rows // 2, 1000)
    conn.execute("DROP TABLE IF EXISTS bench_keys, bench_rk, bench_text, bench_trivial")
    conn.execute("DROP DOMAIN IF EXISTS bench_trivial_domain")
    conn.execute(
        "CREATE TABLE bench_keys AS SELECT rapkey_build('ord', 'cn', 'sh', '2024' || lpad((g % 12 + 1)::text, 2, '0'), "
        f"g::text)::text AS k FROM generate_series(1, {n}) g")
    conn.execute("CREATE TABLE bench_rk (k rapkey)")
    conn.execute('CREATE TABLE bench_text (k text COLLATE "C")')
    conn.execute('CREATE DOMAIN bench_trivial_domain AS text COLLATE "C" CHECK (length(VALUE) > 0)')
    conn.execute("CREATE TABLE bench_trivial (k bench_trivial_domain)")
    cases = {"rapkey": "bench_rk", "trivially checked domain": "bench_trivial", 'text COLLATE "C"': "bench_text"}
    t = alternate({k: timer(conn, f"INSERT INTO {tb} SELECT k FROM bench_keys", before=[f"TRUNCATE {tb}"])
                   for k, tb in cases.items()}, s.rounds)
    base = "trivially checked domain"
    for name in cases:
        row = R.add(w, f"insert {n:,} keys (no index)", name, statistics.median(t[name]), "s",
                    median_ratio(t[name], t[base]) if name != base else None, base if name != base else "")
        if name == "rapkey":
            row.target, row.met = "<= 1.1x trivially checked domain", row.ratio <= 1.1
            r = median_ratio(t[name], t['text COLLATE "C"'])
            R.add(w, f"insert {n:,} keys (no index)", name, row.value, "s", r, 'text COLLATE "C"')
    conn.execute("CREATE INDEX bench_rk_k ON bench_rk (k)")
    conn.execute("VACUUM ANALYZE bench_rk")
    prefix = "ord.cn.sh.202403"
    queries = {
        "rapkey_has_prefix(k, p)": "SELECT count(*) FROM bench_rk WHERE rapkey_has_prefix(k, %s)",
        "k LIKE 'p.%'": "SELECT count(*) FROM bench_rk WHERE k LIKE %s",
    }
    params = {"rapkey_has_prefix(k, p)": (prefix,), "k LIKE 'p.%'": (prefix + ".%",)}
    counts = {k: conn.execute(q, params[k]).fetchone()[0] for k, q in queries.items()}
    assert len(set(counts.values())) == 1, counts
    t = alternate({k: repeat(conn, q, params[k], s.range_reps) for k, q in queries.items()}, s.rounds)
    base = "k LIKE 'p.%'"
    for name, q in queries.items():
        R.add(w, f"prefix scan, btree on k ({counts[name]:,} of {n:,} keys)", name, statistics.median(t[name]) * 1e6, "us",
              median_ratio(t[name], t[base]) if name != base else None, base if name != base else "")
        plan = conn.execute("EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) " + q, params[name]).fetchall()
        R.explains.append((f"prefix scan, {name}", "\n".join(r[0] for r in plan)))
    conn.execute("DROP TABLE bench_keys, bench_rk, bench_text, bench_trivial")
    conn.execute("DROP DOMAIN bench_trivial_domain")


# Output ------------------------------------------------------------------------------------

def fmt_value(row: Row) -> str:
    if row.unit == "bytes":
        return f"{int(row.value):,} B"
    if row.unit == "s":
        return f"{row.value:.3f} s"
    if row.unit in ("ids/s", "ids/ms"):
        return f"{row.value:,.0f} {row.unit}"
    return f"{row.value:,.1f} {row.unit}"


def table_md(rows: list[Row]) -> str:
    lines = ["| workload | case | contender | result | ratio | against | target |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        ratio = "" if r.ratio is None else f"{r.ratio:.2f}"
        target = "" if not r.target else f"{r.target}: {'met' if r.met else 'MISSED'}"
        lines.append(f"| {r.workload} | {r.case} | {r.contender} | {fmt_value(r)} | {ratio} | {r.versus} | {target} |")
    return "\n".join(lines)


def sizes_md() -> str:
    sizes = R.chart["sizes"]
    names = list(sizes)
    parts = list(sizes[names[0]])
    lines = ["| bytes | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for part in parts:
        lines.append(f"| {part} | " + " | ".join(f"{sizes[k][part]:,}" for k in names) + " |")
    ours, uuid = sizes["xid12 gen_xid12()"], sizes["uuid gen_random_uuid()"]
    v7 = sizes.get("uuidv7()")
    lines.append("")
    for part in parts:
        line = f"- {part}: xid12 is {ours[part] / uuid[part] - 1:+.0%} against gen_random_uuid()"
        if v7:
            line += f", {ours[part] / v7[part] - 1:+.0%} against uuidv7()"
        line += f", {ours[part] / sizes['bigint identity'][part] - 1:+.0%} against bigint"
        lines.append(line + ".")
    lines += ["",
              "Where it does not: an index entry is an 8-byte header and a key padded to 8 bytes, so a lone",
              "12-byte key takes 16 bytes like a uuid: xid12's primary key, and an index on a referencing",
              "column, are the size of a time-ordered uuid's (a random uuid's primary key is bigger only",
              "from page splits at random places). This table's row (id, smallint, int) also pads to the",
              "same size. Where it does: where the id shares its 8-byte slot with a narrow column, as in",
              "the (id, smallint) index and the referencing table (parent id, smallint), 12 + 2 bytes fit",
              "in 16 where a uuid's 16 + 2 take 24. A lone bigint key is smaller still. The text forms of the id",
              "(char(20), text) are bigger everywhere; bytea is as small as xid12 but sorts slower and reads as hex."]
    return "\n".join(lines)


def chart(path: Path, title: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(17, 5.5))
    gen = R.chart["generate"]
    names = list(gen)
    ax = axes[0]
    colors = ["#2a7" if "xid12" in k else "#48c" if "snowflake" in k else "#999" for k in names]
    ax.barh(names, [gen[k] for k in names], color=colors)
    ax.invert_yaxis()
    ax.set_xscale("log")  # from tens of ns to a PL/pgSQL generator's microseconds
    ax.set_xlabel("ns per id, one session, log scale (lower is better)")
    ax.set_title("Generation cost")
    for i, k in enumerate(names):
        ax.text(gen[k], i, f" {gen[k]:.0f}", va="center", fontsize=8)

    ins = R.chart["insert"]
    names = list(ins)
    ax = axes[1]
    colors = ["#2a7" if "xid12" in k else "#48c" if "snowflake" in k else "#999" for k in names]
    ax.barh(names, list(ins.values()), color=colors)
    ax.invert_yaxis()
    ax.set_xlabel(f"seconds to insert {R.chart['rows']:,} rows, PK DEFAULT generator (lower is better)")
    ax.set_title("Insert with a primary key")
    for i, k in enumerate(names):
        ax.text(ins[k], i, f" {ins[k]:.2f}", va="center", fontsize=8)

    sizes = R.chart["sizes"]
    names = list(sizes)
    parts = ["heap", "primary key", "(id, n) index", "child FK index"]
    ax = axes[2]
    width = 0.8 / len(parts)
    for j, part in enumerate(parts):
        ax.barh([i + j * width for i in range(len(names))], [sizes[k][part] / 2**20 for k in names],
                height=width, label=part)
    ax.set_yticks([i + 0.4 - width / 2 for i in range(len(names))], names)
    ax.invert_yaxis()
    ax.set_title("Sizes after the insert, MiB (lower is better)")
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.06), ncol=4)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)


def machine() -> dict[str, str]:
    model = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        mem = f"{int(open('/proc/meminfo').readline().split()[1]) // 1024:,} MiB"
    except (OSError, ValueError, IndexError):
        pass
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no", "--", "src", "crates", "sql"],
                           capture_output=True, text=True).stdout.strip()
    if commit and dirty:
        commit += " with uncommitted changes to the extension"
    return {"cpu": f"{model} x {os.cpu_count()}", "memory": mem, "kernel": platform.release(),
            "load": " ".join(f"{x:.1f}" for x in os.getloadavg()), "commit": commit or "unknown"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="a small smoke-test scale (no timing assertions)")
    ap.add_argument("--out", help="directory for BENCHMARKS.md and benchmarks.png")
    ap.add_argument("--command", default="", help="the command that ran the suite, for BENCHMARKS.md")
    ap.add_argument("--steps", default="", help="only these steps, by number (e.g. 1,2,3: generate, insert, "
                    "sort/CREATE INDEX/COPY); the default is all of them")
    args = ap.parse_args()
    only = {x.strip() for x in args.steps.split(",") if x.strip()}
    s = QUICK if args.quick else FULL
    if args.out:
        out_md, out_png = Path(args.out) / "BENCHMARKS.md", Path(args.out) / "benchmarks.png"
    elif args.quick:
        d = Path(tempfile.gettempdir()) / "pg_idgen-bench-quick"
        out_md, out_png = d / "BENCHMARKS.md", d / "benchmarks.png"
    else:
        out_md, out_png = ROOT / "BENCHMARKS.md", ROOT / "docs" / "benchmarks.png"
    started = time.perf_counter()
    host = machine()
    load_start = host["load"]
    R.chart["rows"] = s.rows

    with psycopg.connect(DSN, autocommit=True) as conn:
        conn.add_notice_handler(lambda d: None)
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_idgen")
        settings = {"jit": "off", "max_parallel_workers_per_gather": "0", "max_parallel_maintenance_workers": "0",
                    "work_mem": "'1GB'", "maintenance_work_mem": "'1GB'"}
        for k, v in settings.items():
            conn.execute(f"SET {k} = {v}")
        version = q1(conn, "SELECT current_setting('server_version')")
        vnum = int(q1(conn, "SELECT current_setting('server_version_num')"))
        ext = q1(conn, "SELECT extversion FROM pg_extension WHERE extname = 'pg_idgen'")
        shown = {k: q1(conn, f"SELECT current_setting('{k}')") for k in
                 ("jit", "max_parallel_workers_per_gather", "max_parallel_maintenance_workers", "shared_buffers",
                  "work_mem", "maintenance_work_mem", "max_wal_size", "fsync", "synchronous_commit", "wal_level")}
        has_uuidv7 = vnum >= 180000
        gens = {"gen_xid12()": "gen_xid12()", "gen_random_uuid()": "gen_random_uuid()"}
        if has_uuidv7:
            gens["uuidv7()"] = "uuidv7()"
        else:
            R.notes.append(f"uuidv7() is built in from PostgreSQL 18 on; skipped on {version}.")
        # Optional third-party contenders: measured when the server has them, never shipped here.
        if q1(conn, "SELECT count(*) FROM pg_available_extensions WHERE name = 'pg_uuidv7'"):
            conn.execute("CREATE EXTENSION IF NOT EXISTS pg_uuidv7")
            gens["uuid_generate_v7() (pg_uuidv7)"] = "uuid_generate_v7()"
        else:
            R.notes.append("pg_uuidv7 (C extension) is not installed in this server: skipped.")
        if q1(conn, "SELECT to_regprocedure('xid(timestamptz)') IS NOT NULL"):
            gens["xid() (modfin/pg-xid)"] = "xid()"
        else:
            R.notes.append("modfin/pg-xid (PL/pgSQL `xid()`) is not installed in this database: skipped.")
        gens["gen_snowflake()"] = "gen_snowflake()"
        print(f"pg_idgen {ext} benchmarks on PostgreSQL {version}, scale {'quick' if args.quick else 'full'} "
              f"({s.rows:,} rows, {s.rounds} rounds, {s.big_rounds} for the 2M-row workloads)", flush=True)
        for note in R.notes:
            print("note: " + note)

        def step(name, fn, *a):
            if only and name.split()[0].split("-")[0] not in only:
                return
            t = time.perf_counter()
            fn(*a)
            print(f"  {name}: {time.perf_counter() - t:.0f} s", flush=True)

        step("1 generate", generate, conn, s, gens)
        schemes = {"xid12 gen_xid12()": ("xid12", "gen_xid12()"),
                   "uuid gen_random_uuid()": ("uuid", "gen_random_uuid()")}
        if has_uuidv7:
            schemes["uuidv7()"] = ("uuid", "uuidv7()")
        if "uuid_generate_v7() (pg_uuidv7)" in gens:
            schemes["uuid_generate_v7() (pg_uuidv7)"] = ("uuid", "uuid_generate_v7()")
        if "xid() (modfin/pg-xid)" in gens:
            schemes["xid() (modfin/pg-xid), char(20)"] = ("char(20)", "xid()")
        schemes.update({
            "bigint identity": ("bigint", "identity"),
            "bigint gen_snowflake()": ("bigint", "gen_snowflake()"),
            "xid text, char(20)": ("char(20)", "gen_xid12()::text"),
            'xid text, text COLLATE "C"': ('text COLLATE "C"', "gen_xid12()::text"),
            "xid bytea": ("bytea", "gen_xid12()::bytea"),
        })
        step("2 insert", insert, conn, s, schemes)
        step("3-4 sort, CREATE INDEX, COPY", sort_and_copy, conn, s, has_uuidv7)
        pages = {"xid12 gen_xid12()": "xid12", "uuidv7()" if has_uuidv7 else "uuid gen_random_uuid()": "uuid",
                 "bigint identity": "bigint"}
        step("5 pagination", pagination, conn, s, pages)
        for tb in R.chart.get("insert_tables", {}).values():
            conn.execute(f"DROP TABLE IF EXISTS {tb}")
        step("6 time range", time_range, conn, s)
        step("7 rapkey", rapkey, conn, s)

    elapsed = time.perf_counter() - started
    host = machine()
    table = table_md(R.rows)
    print()
    print(table)
    targets = [r for r in R.rows if r.target]
    print("\nTargets:")
    for r in targets:
        print(f"  {'met   ' if r.met else 'MISSED'}  {r.contender}: {r.case} = {r.ratio:.2f}x {r.versus} (target {r.target})")
    print(f"\n{sum(r.met for r in targets)} of {len(targets)} targets met; {elapsed:.0f} s in all")

    command = args.command or f"bash scripts/bench.sh {vnum // 10000}" + (" --quick" if args.quick else "")
    title = (f"pg_idgen {ext} on PostgreSQL {version}, {s.rows:,} rows; {host['cpu']}; "
             f"{datetime.date.today().isoformat()}; shared noisy machine: read ratios, not absolutes")
    try:
        if only:
            raise ImportError(f"--steps {args.steps} (the chart needs every step)")
        chart(out_png, title)
        print(f"chart: {out_png}")
    except ImportError as e:
        print(f"no chart: {e}")
    md = [
        "# Benchmarks",
        "",
        f"Latest results of `{command}` ({'quick smoke-test scale' if args.quick else 'full scale'}), "
        f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, {elapsed / 60:.1f} minutes.",
        "",
        f"![generation, insert and sizes by id scheme]({os.path.relpath(out_png, out_md.parent)})",
        "",
        "## Machine and versions",
        "",
        f"- CPU: {host['cpu']}; memory {host['memory']}; Linux {host['kernel']}",
        f"- load average at the start {load_start}, at the end {host['load']} (1, 5, 15 min)",
        f"- PostgreSQL {version}; pg_idgen {ext}, release build, commit {host['commit']}",
        "- settings: " + ", ".join(f"{k} = {v}" for k, v in shown.items()),
        "",
        "**This machine is shared and noisy**: other jobs (compilers, test suites) run on the same two",
        "cores, and absolute times vary by ±40% or more between runs. Read the ratios: each one",
        "compares contenders measured alternately in the same rounds (the order rotates every round),",
        "after a warm-up, as the median of the per-round ratios.",
        "",
        "## How each workload is measured",
        "",
        f"1. **generate**: `SELECT count(gen()) FROM generate_series(1, {s.gen_calls:,})` per generator, "
        "against the bare series and `clock_timestamp()`; \"cost per id above the bare series\" "
        "is (gen − bare) / (clock_timestamp − bare) per round. Snowflake's rate against the format is "
        "the ids' count over the milliseconds they span (`max(id >> 22) - min(id >> 22) + 1`). pgbench `-M prepared`, "
        f"{s.pgbench_seconds} s per run, 1000 ids per statement "
        "(`SELECT count(gen()) FROM generate_series(1, 1000)`) and one id per statement (`SELECT gen()`).",
        f"2. **insert**: `INSERT INTO t (n, payload) SELECT ... generate_series(1, {s.rows:,})` into a logged "
        "table whose `id` is the primary key with the generator as DEFAULT (bigint: `GENERATED ALWAYS "
        "AS IDENTITY`). A `CHECKPOINT` before each insert, outside the timing, so that every insert pays "
        "the same full-page images; WAL bytes by `pg_current_wal_lsn()`. The xid text and bytea contenders "
        "take `gen_xid12()::text` / `::bytea`: what a user without this type stores. Then, once, an index "
        "on `(id, n smallint)` and a child table `(parent id-type REFERENCES t, qty smallint)` with an "
        "index on `parent`.",
        f"3. **sort**: `SELECT * FROM (SELECT x FROM t ORDER BY x) s OFFSET {s.rows:,}` and "
        "`CREATE INDEX` over random-order values, `work_mem` and `maintenance_work_mem` 1GB.",
        "4. **COPY**: server-side `COPY t TO '/dev/null'` and `COPY t FROM 'file'` into an "
        "empty table without indexes, text and binary.",
        f"5. **pagination**: `WHERE id > $cursor ORDER BY id LIMIT 100` ({s.page_reps} prepared "
        "executions per round) at 1% and 99% depth of the insert's table, and `OFFSET`.",
        f"6. **time range**: {s.rows:,} rows over 30 days in time order, `count(*), sum(payload)` "
        "of one hour.",
        "7. **rapkey**: insert of keys into a `rapkey` column, a domain with `CHECK (length(VALUE) > 0)`, "
        "and `text COLLATE \"C\"`; prefix scan with a btree on the key.",
        "",
    ]
    if R.notes:
        md += ["## Skipped contenders", ""] + [f"- {n}" for n in R.notes] + [""]
    md += ["## Targets (issue 12)", ""]
    for r in targets:
        md.append(f"- **{'met' if r.met else 'MISSED'}**: {r.contender}, {r.case}: {r.ratio:.2f}× {r.versus} (target {r.target})")
    notes = ROOT / "bench" / "notes.md"
    if notes.exists():
        md += ["", notes.read_text().strip()]
    md += ["", "## Sizes: where xid12 saves space and where it does not", "", sizes_md(), "",
           "## All results", "", table, "", "## Plans", ""]
    for title_, plan in R.explains:
        md += [f"{title_}:", "", "```", plan, "```", ""]
    out_md.parent.mkdir(parents=True, exist_ok=True)
    out_md.write_text("\n".join(md) + "\n")
    print(f"results: {out_md}")


if __name__ == "__main__":
    sys.exit(main())
