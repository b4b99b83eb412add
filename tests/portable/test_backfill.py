"""idgen_backfill in pg_idgen's portable edition: sql/backfill.sql itself, which portable/build.py
puts into the edition with idgen_statement_timeout written in PL/pgSQL
(portable/src/60_backfill_portable.sql). Run by tests/portable/run.sh (and run_tle.sh) after
test_portable.py:

    python test_backfill.py OWNER_DSN [NATIVE_DSN]

OWNER_DSN: a database where the edition is installed in schema idgen by the role that owns the
database and is not superuser. PORTABLE_WRITER_DSN, PORTABLE_OTHER_DSN (required): the same
database as two roles with no rights of their own. This test grants the writer what
portable/README.md tells an owner to grant a role that generates ids, and CREATE on the
database: its tables are in a schema of its own. The other role gets USAGE on schema idgen and
CREATE on the database: it reads progress, and it is the untrusted owner of a schema where
others fill tables. NATIVE_DSN: a database with the native extension, to compare the order of
the ids (skipped without it). Every connection has an empty search_path.

What users rely on, as native's tests (tests/client/test_backfill.py, tests/regress/sql/
search_path.sql, permissions.sql) check it: a live table filled while another session inserts
and updates, every row once, ids distinct and in the walk's order (the same order as native's);
gen_snowflake(); a cancel then a second call; the per-batch statement_timeout (here checked when
the batch ends) and the session's own; the progress table's row-level security; bad arguments;
and the hostile cases: operators and types planted first on the caller's search_path, and the
owner of the table's schema planting a relation named like the work table, or replacing the
table, during a run. Nothing planted may run.
"""

import os
import pathlib
import re
import sys
import threading
import time

import psycopg

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "portable"))
import build  # noqa: E402  (portable/build.py: the seam with the native files)

ROWS = int(os.environ.get("PORTABLE_BACKFILL_ROWS", "20000"))
failures: list[str] = []
checks = 0
OWNER = WRITER = OTHER = ""  # the three DSNs, set by main()


def check(ok: bool, what: str) -> None:
    global checks
    checks += 1
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def connect(dsn, notices=None):
    conn = psycopg.connect(dsn, autocommit=True)
    if notices is not None:
        conn.add_notice_handler(lambda d: notices.append(d.message_primary))
    return conn


def error_of(conn, sql, params=()):
    """None, or (sqlstate, message, detail) of the error sql raised."""
    try:
        conn.execute(sql, params)
        return None
    except psycopg.Error as e:
        return (e.diag.sqlstate, e.diag.message_primary, e.diag.message_detail)


def one(conn, sql, params=()):
    return conn.execute(sql, params).fetchone()


def legacy_table(conn, table: str, rows: int, index: bool = True, xid12: str = "idgen.xid12") -> None:
    """Keyed by a uuid, created_at with ties (rows // 4 timestamps repeat) and several rows a
    second, deterministic (the native comparison builds the same rows), an xid12 and a bigint
    column to fill, their defaults set as the README's playbook does (step 2)."""
    conn.execute(f"""CREATE TABLE {table} (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        payload integer NOT NULL DEFAULT 0,
        legacy boolean NOT NULL DEFAULT false,
        xid {xid12}, flake bigint)""")
    conn.execute(f"""INSERT INTO {table} (id, created_at, legacy)
        SELECT md5(g::text)::uuid, '2025-01-01'::timestamptz + ((g * 7919) % {rows * 3 // 4}) * interval '0.3 s', true
        FROM generate_series(1, {rows}) g""")
    if index:
        conn.execute(f"CREATE INDEX ON {table} (created_at)")
    conn.execute(f"ANALYZE {table}")


def out_of_order(conn, table: str, resumed: bool = False) -> int:
    """Legacy rows whose created_at is earlier than that of the row before them in xid order,
    except where README.md says it may be: across a wrap of the 24-bit counter, and (resumed)
    in the second where a resumed run, another session's pid, took over."""
    return one(conn, f"""SELECT count(*) FROM (
        SELECT created_at, xid, lag(created_at) OVER w AS before, lag(xid) OVER w AS before_xid
        FROM {table} WHERE legacy WINDOW w AS (ORDER BY xid)) s
        WHERE created_at < before
          AND NOT (idgen.xid12_time(xid) = idgen.xid12_time(before_xid)
                   AND (idgen.xid12_counter(xid) - idgen.xid12_counter(before_xid) > 8388608
                        OR ({resumed} AND idgen.xid12_pid(xid) <> idgen.xid12_pid(before_xid))))""")[0]


class Writer:
    """The application: another connection (the table's owner) that inserts a row (its ids from
    the columns' defaults) and updates an existing one, in a loop, until the block ends."""

    def __init__(self, dsn: str, table: str, sample: list):
        self.dsn, self.table, self.sample = dsn, table, sample
        self.stop = threading.Event()
        self.started = threading.Event()
        self.inserted = 0
        self.updates: dict = {}
        self.errors: list = []
        self.thread = threading.Thread(target=self.run)

    def run(self):
        try:
            with connect(self.dsn) as w:
                k = 0
                while not self.stop.is_set():
                    w.execute(f"INSERT INTO {self.table} (created_at) VALUES (clock_timestamp())")
                    self.inserted += 1
                    target = self.sample[k % len(self.sample)]
                    k += 1
                    w.execute(f"UPDATE {self.table} SET payload = payload + 1 WHERE id = %s", (target,))
                    self.updates[target] = self.updates.get(target, 0) + 1
                    self.started.set()
                    time.sleep(0.002)
        except Exception as e:
            self.errors.append(e)
        finally:
            self.started.set()

    def __enter__(self):
        self.thread.start()
        self.started.wait(60)
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()
        check(not self.errors and self.inserted > 0, f"the application's writes: {self.inserted}, {self.errors}")


def install(p) -> None:
    """The edition has every routine of sql/backfill.sql, the replaced one in PL/pgSQL; none is
    SECURITY DEFINER; the progress table is protected by row-level security and granted as
    native grants it, to nobody else."""
    native = build.NATIVE["60_backfill_portable.sql"]
    text = (ROOT / native).read_text()
    replaced = sorted(build.blocks(text, native)[0])  # its edition blocks: one function each
    routines = sorted(set(re.findall(r"^CREATE (?:FUNCTION|PROCEDURE) (\w+)\(", text, re.M)))
    missing = [r for r in routines if not one(p, """SELECT EXISTS (SELECT FROM pg_proc
        WHERE pronamespace = 'idgen'::regnamespace AND proname = %s)""", (r,))[0]]
    check(not missing, f"routines of {native} missing from the edition: {missing}")
    langs = dict(p.execute("""SELECT p.proname, l.lanname FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
        WHERE p.pronamespace = 'idgen'::regnamespace AND p.proname = ANY (%s)""",
                           (replaced,)).fetchall())
    check(langs == {s: "plpgsql" for s in replaced}, f"the replaced functions: {langs}")
    definers = [r[0] for r in p.execute("""SELECT p.oid::regprocedure::text FROM pg_proc p
        WHERE p.pronamespace = 'idgen'::regnamespace AND p.prosecdef
          AND (p.proname LIKE 'idgen\\_backfill%%' OR p.proname = 'idgen_statement_timeout')""")]
    check(not definers, f"SECURITY DEFINER backfill routines: {definers}")
    grants = sorted(p.execute("""SELECT CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE a.grantee::regrole::text END,
        a.privilege_type FROM pg_class c, aclexplode(c.relacl) a
        WHERE c.oid = 'idgen.idgen_backfill_progress'::regclass AND a.grantee <> c.relowner""").fetchall())
    # UPDATE of the progress columns only, and no DELETE: with UPDATE or DELETE on the table, LOCK
    # TABLE in SHARE mode or stronger is allowed (issue 44; tests/portable/test_hostile.py).
    want = sorted(("PUBLIC", t) for t in ("SELECT", "INSERT"))
    check(grants == want, f"grants on idgen_backfill_progress: {grants}")
    columns = [r[0] for r in p.execute("""SELECT a.attname FROM pg_attribute a
        WHERE a.attrelid = 'idgen.idgen_backfill_progress'::regclass AND a.attnum > 0
          AND has_column_privilege('public', a.attrelid, a.attnum, 'UPDATE') ORDER BY a.attnum""")]
    check("rows_done" in columns and not {"relation", "target_column", "run_by"} & set(columns),
          f"columns PUBLIC may update: {columns}")
    rls = one(p, """SELECT c.relrowsecurity, c.relforcerowsecurity,
        (SELECT array_agg(polname::text ORDER BY polname) FROM pg_policy WHERE polrelid = c.oid)
        FROM pg_class c WHERE c.oid = 'idgen.idgen_backfill_progress'::regclass""")
    check(rls == (True, False, ["idgen_backfill_progress_own", "idgen_backfill_progress_read"]), f"row-level security: {rls}")
    print(f"install: {len(routines)} routines of {native} ({', '.join(replaced)} in PL/pgSQL), none SECURITY DEFINER; "
          f"progress table: {', '.join(t for _, t in grants)} to PUBLIC, row-level security")


def generator() -> None:
    """portable/build.py's seam: the generated scripts hold sql/backfill.sql with its edition
    block swapped for the portable one, once; a portable block whose CREATE line differs from
    native's, a native file without the block, or one that needs the library outside a block,
    stops the build."""
    v = build.version()
    for dist in (f"pg_idgen_portable--{v}.sql", f"pg_idgen_tle--{v}.sql"):
        text = (ROOT / "portable" / "dist" / dist).read_text()
        made = len(re.findall(r"^CREATE FUNCTION (?:@extschema@\.)?idgen_statement_timeout\(", text, re.M))
        native = text.count("CREATE PROCEDURE idgen_backfill(relation regclass")
        check(made == 1 and native == 1 and "MODULE_PATHNAME" not in text,
              f"{dist}: idgen_statement_timeout created {made} times, the native procedure {native} times")
    # The seam (build.py native_piece): sql/backfill.sql's edition block swapped for the
    # portable one; a portable block whose CREATE line differs from native's, a native file
    # without the block, or one that needs the library outside a block, stops the build.
    name = "60_backfill_portable.sql"
    native = (ROOT / "sql" / "backfill.sql").read_text()
    ours = (ROOT / "portable" / "src" / name).read_text()
    cases = {
        "another result": (native, ours.replace("RETURNS void", "RETURNS boolean", 1), "is not native's"),
        "another parameter name": (native, ours.replace("(milliseconds integer)", "(ms integer)", 1), "is not native's"),
        "no native block": (native.replace("-- edition block idgen_statement_timeout", "-- edition blocks"), ours, "edition block"),
        "the library outside a block": (native + "\nCREATE FUNCTION f() RETURNS void AS 'MODULE_PATHNAME', 'f' LANGUAGE C;\n",
                                        ours, "outside its edition blocks"),
    }
    for what, (n, o, refusal) in cases.items():
        try:
            build.native_piece(name, True, n, o)
            got = "built"
        except SystemExit as e:
            got = str(e)
        check(refusal in got, f"build.py, {what}: {got}")
    print(f"generator: both scripts create idgen_statement_timeout once (the portable one) and sql/backfill.sql's procedure "
          f"once; build.py refuses {len(cases)} seams that do not fit")


def live(w, n) -> None:
    """The writer fills its own live table while the application writes: gen_xid12(created_at)
    ordered by created_at (an index walk), then gen_snowflake() (the primary key's walk)."""
    table = "bf_w.live"
    legacy_table(w, table, ROWS)
    w.execute(f"ALTER TABLE {table} ALTER COLUMN xid SET DEFAULT idgen.gen_xid12(), "
              "ALTER COLUMN flake SET DEFAULT idgen.gen_snowflake()")
    sample = [r[0] for r in w.execute(f"SELECT id FROM {table} ORDER BY id LIMIT 2000")]
    notices: list = []
    started = time.monotonic()
    with Writer(WRITER, table, sample) as app:
        with connect(WRITER, notices) as c:
            c.execute(f"""CALL idgen.idgen_backfill('{table}', 'xid', 'idgen.gen_xid12(created_at)',
                batch_size => 1000, order_by => 'created_at')""")
            c.execute(f"CALL idgen.idgen_backfill('{table}', 'flake', 'idgen.gen_snowflake()', batch_size => 1000)")
    took = time.monotonic() - started
    total, xids, flakes, distinct_x, distinct_f = one(
        w, f"SELECT count(*), count(xid), count(flake), count(DISTINCT xid), count(DISTINCT flake) FROM {table}")
    check(total == ROWS + app.inserted and xids == flakes == distinct_x == distinct_f == total,
          f"live: {total} rows ({app.inserted} inserted meanwhile), {xids} xid, {flakes} flake, "
          f"{distinct_x} and {distinct_f} distinct")
    check(one(w, f"""SELECT count(*) FROM {table}
        WHERE legacy AND idgen.xid12_time(xid) <> date_trunc('second', created_at)""")[0] == 0, "live: xid12 time part")
    disorder = out_of_order(w, table)
    check(disorder == 0, f"live: {disorder} xid12 ids out of created_at order")
    flake_back = one(w, f"""SELECT count(*) FROM (SELECT flake, lag(flake) OVER (ORDER BY id) AS before
        FROM {table} WHERE legacy) s WHERE flake < before""")[0]
    check(flake_back == 0, f"live: {flake_back} Snowflake ids out of the primary key's order")
    stored = dict(w.execute(f"SELECT id, payload FROM {table} WHERE payload > 0").fetchall())
    check(stored == app.updates, "live: a concurrent update was lost")
    progress = w.execute("""SELECT target_column, run_by, rows_done, rows_total, batches, finished_at IS NOT NULL, walk
        FROM idgen.idgen_backfill_progress WHERE relation = 'bf_w.live'::regclass ORDER BY 1""").fetchall()
    batches = -(-ROWS // 1000)
    want = [("flake", "idgen_writer", ROWS, ROWS, batches, True, "index"),
            ("xid", "idgen_writer", ROWS, ROWS, batches, True, "index")]
    check(progress == want, f"live: progress {progress}")
    check(bool(notices) and re.fullmatch(rf"idgen_backfill bf_w\.live\.flake: {ROWS} of {ROWS} rows in [0-9.]+ s, done",
                                         notices[-1] or "") is not None, f"live: last notice {notices[-1:]}")
    print(f"live: {ROWS} rows filled twice (xid12 by created_at, Snowflake by key) as idgen_writer in {took:.1f} s "
          f"while {app.inserted} rows were inserted and {sum(app.updates.values())} updated; all distinct, in order")
    if not n:
        print("live: native extension not available, the order is not compared with native's")
        return
    # The same rows, the same call, native: the ids sort the rows the same way.
    n.execute("DROP TABLE IF EXISTS public.bf_live")
    legacy_table(n, "public.bf_live", ROWS, xid12="public.xid12")
    n.execute("SET search_path = public")
    n.execute("""CALL idgen_backfill('public.bf_live', 'xid', 'gen_xid12(created_at)', batch_size => 1000,
        order_by => 'created_at')""")
    n.execute("RESET search_path")
    native_order = [r[0] for r in n.execute("SELECT id FROM public.bf_live ORDER BY xid")]
    ours = [r[0] for r in w.execute(f"SELECT id FROM {table} WHERE legacy ORDER BY xid")]
    # Native's counter starts at random: a wrap within a second reorders that second (README).
    wrapped = one(n, """SELECT count(*) FROM (SELECT xid, lag(xid) OVER (ORDER BY created_at, id) AS b FROM public.bf_live) s
        WHERE public.xid12_time(xid) = public.xid12_time(b) AND xid < b""")[0]
    if wrapped:
        print(f"live: native's counter wrapped in a second ({wrapped} rows): the orders are not compared")
    else:
        same = sum(a == b for a, b in zip(native_order, ours))
        check(len(ours) == len(native_order) == same, f"live: {same} of {len(ours)} rows in native's order")
        print(f"live: ordered by the new ids, the {ROWS} rows come in native's order")
    n.execute("DROP TABLE public.bf_live")


def cancel_then_resume(w) -> None:
    """A run stopped by a cancel in the middle (at a row another session holds), then called
    again: the rows filled before keep their ids, every row is filled once, in order. An index
    walk, and a sorted one (no index on created_at) whose work table outlives the session."""
    for walk, index in (("index", True), ("sorted", False)):
        table = f"bf_w.resumed_{walk}"
        legacy_table(w, table, ROWS, index=index)
        call = (f"CALL idgen.idgen_backfill('{table}', 'xid', 'idgen.gen_xid12(created_at)', batch_size => 1000, "
                "order_by => 'created_at', lock_timeout => '10min')")
        held = one(w, f"SELECT id FROM {table} ORDER BY created_at, id OFFSET {ROWS // 2} LIMIT 1")[0]
        runner, errors = [], []

        def run():
            with connect(WRITER) as c:
                runner.append(c.info.backend_pid)
                try:
                    c.execute(call)
                except psycopg.Error as e:
                    errors.append(e)

        thread = threading.Thread(target=run)
        with connect(WRITER) as holder, connect(OTHER) as watcher:
            holder.execute("BEGIN")
            holder.execute(f"SELECT FROM {table} WHERE id = %s FOR UPDATE", (held,))
            thread.start()
            deadline, seen = time.monotonic() + 120, None
            # Another role sees the run's progress while it goes on.
            while time.monotonic() < deadline and thread.is_alive():
                seen = one(watcher, """SELECT rows_done, rows_total, run_by FROM idgen.idgen_backfill_progress
                    WHERE relation::text = %s AND finished_at IS NULL AND pid = %s""", (table, runner[0] if runner else 0))
                if seen and seen[0] >= ROWS // 2:
                    break
                time.sleep(0.02)
            check(seen is not None and seen[0] >= ROWS // 2 and seen[1:] == (ROWS, "idgen_writer"),
                  f"{walk} walk: progress seen by another role before the cancel: {seen} {errors}")
            if runner:
                holder.execute("SELECT pg_cancel_backend(%s)", runner)
            thread.join()
            holder.execute("ROLLBACK")
        check(len(errors) == 1 and isinstance(errors[0], psycopg.errors.QueryCanceled), f"{walk} walk: cancel: {errors}")
        before = dict(w.execute(f"SELECT id, xid FROM {table} WHERE xid IS NOT NULL").fetchall())
        work = one(w, f"""SELECT count(*) FROM pg_class WHERE relnamespace = 'bf_w'::regnamespace
            AND relname = format('idgen_backfill_%%s_%%s', '{table}'::regclass::oid,
                (SELECT attnum FROM pg_attribute WHERE attrelid = '{table}'::regclass AND attname = 'xid'))""")[0]
        notices: list = []
        with connect(WRITER, notices) as c:
            c.execute(call)
        after = dict(w.execute(f"SELECT id, xid FROM {table}").fetchall())
        kept = all(after[k] == v for k, v in before.items())
        check(ROWS // 2 <= len(before) < ROWS and len(after) == ROWS and None not in after.values()
              and len(set(after.values())) == ROWS and kept,
              f"{walk} walk: {len(before)} rows filled before the cancel, {len(after)} after, kept: {kept}")
        disorder = out_of_order(w, table, resumed=True)
        check(disorder == 0, f"{walk} walk: {disorder} rows out of order after the resumed run")
        resumed = "resuming the work table of an earlier run" in (notices[0] if notices else "")
        check(resumed == (walk == "sorted") and work == (walk == "sorted"),
              f"{walk} walk: work table left by the cancel: {work}; first notice: {notices[:1]}")
        print(f"cancel then resume, {walk} walk: {len(before)} rows filled before the cancel kept their ids, "
              f"{ROWS - len(before)} filled by the second call{' from the work table it left' if resumed else ''}")


def statement_timeouts(w) -> None:
    """statement_timeout per batch: a batch that takes longer is rolled back with 57014 (here
    when it ends: portable/README.md). The session's own statement_timeout runs for the whole
    CALL here (native re-arms the timer per batch): the CALL is cancelled, the batches before
    stay, and a second call carries on."""
    w.execute("CREATE TABLE bf_w.timed (id int PRIMARY KEY, xid idgen.xid12)")
    w.execute("INSERT INTO bf_w.timed SELECT g FROM generate_series(1, 1000) g")
    w.execute("""CREATE FUNCTION bf_w.slow_xid(seconds float8) RETURNS idgen.xid12 LANGUAGE sql VOLATILE
        AS $$ SELECT idgen.gen_xid12() FROM pg_catalog.pg_sleep(seconds) $$""")
    got = error_of(w, """CALL idgen.idgen_backfill('bf_w.timed', 'xid', 'bf_w.slow_xid(0.01)', batch_size => 200,
        statement_timeout => '300ms')""")
    filled = one(w, "SELECT count(xid) FROM bf_w.timed")[0]
    check(got is not None and got[:2] == ("57014", "canceling statement due to statement timeout") and filled == 0,
          f"a batch longer than statement_timeout: {got}, {filled} rows filled")
    # Quick batches under a statement_timeout: not cancelled.
    w.execute("CALL idgen.idgen_backfill('bf_w.timed', 'xid', 'idgen.gen_xid12()', batch_size => 100, statement_timeout => '30s')")
    check(one(w, "SELECT count(DISTINCT xid) FROM bf_w.timed")[0] == 1000, "batches within statement_timeout")
    w.execute("UPDATE bf_w.timed SET xid = NULL")
    # Not a race with the machine's speed: pg_sleep sleeps at least as asked, so the 1000 rows
    # take at least 5 s, above the session's 3 s however fast the machine; the first batch of
    # 100 (0.5 s and the run's setup) has 2.5 s to commit, a margin that holds at 10x slower.
    w.execute("SET statement_timeout = '3s'")
    got = error_of(w, """CALL idgen.idgen_backfill('bf_w.timed', 'xid', 'bf_w.slow_xid(0.005)', batch_size => 100,
        statement_timeout => '30s')""")
    w.execute("RESET statement_timeout")
    filled = one(w, "SELECT count(xid) FROM bf_w.timed")[0]
    check(got is not None and got[0] == "57014" and 0 < filled < 1000 and filled % 100 == 0,
          f"the session's statement_timeout over a longer run: {got}, {filled} rows filled")
    w.execute("CALL idgen.idgen_backfill('bf_w.timed', 'xid', 'bf_w.slow_xid(0.002)', batch_size => 100)")
    check(one(w, "SELECT count(DISTINCT xid) FROM bf_w.timed")[0] == 1000, "the call after the session's timeout")
    print(f"statement_timeout: a slow batch rolled back with 57014; the session's own cancelled the CALL after "
          f"{filled} rows, the next call filled the rest")


def bad_arguments(w) -> None:
    """Native's checks, made before any row changes (the same code: a few of them)."""
    w.execute("""CREATE TABLE bf_w.target (id int PRIMARY KEY, u uuid, n numeric, xid idgen.xid12, j json)""")
    w.execute("INSERT INTO bf_w.target (id) SELECT g FROM generate_series(1, 3000) g")
    w.execute("CREATE TABLE bf_w.keyless (xid idgen.xid12)")
    w.execute("CREATE VIEW bf_w.target_view AS SELECT * FROM bf_w.target")
    calls = [
        ("'bf_w.no_such_table', 'xid', 'idgen.gen_xid12()'", "42P01"),
        ("'bf_w.target_view', 'xid', 'idgen.gen_xid12()'", "42809"),
        ("'bf_w.target', 'no_such_column', 'idgen.gen_xid12()'", "42703"),
        ("'bf_w.target', 'u', 'idgen.gen_xid12()'", "42804"),
        ("'bf_w.target', 'xid', 'idgen.gen_xid12()', batch_size => 0", "22023"),
        ("'bf_w.target', 'xid', 'idgen.gen_xid12()', statement_timeout => '-1 ms'", "22023"),
        ("'bf_w.target', 'xid', 'idgen.gen_xid12()', order_by => 'xid'", "22023"),
        ("'bf_w.target', 'xid', 'idgen.gen_xid12()', order_by => 'j'", "42883"),
        ("'bf_w.keyless', 'xid', 'idgen.gen_xid12()'", "55000"),
        ("'bf_w.target', 'xid', 'no_such_function()'", "42883"),
        ("'bf_w.target', 'xid', 'NULL::idgen.xid12'", "22004"),
        ("NULL, 'xid', 'idgen.gen_xid12()'", "22004"),
    ]
    got = [(args, (error_of(w, f"CALL idgen.idgen_backfill({args})") or ("ok",))[0]) for args, _ in calls]
    wrong = [(args, state, want) for (args, state), (_, want) in zip(got, calls) if state != want]
    check(not wrong, f"bad arguments: {wrong}")
    check(one(w, "SELECT count(xid) FROM bf_w.target")[0] == 0, "a bad call changed rows")
    print(f"bad arguments: {len(calls)} calls refused with native's SQLSTATEs, no row changed")


def rights(p, w, o) -> None:
    """It runs as the caller: another role cannot fill a table it may not update. The progress
    table: every role reads every row; a role writes only its own (row-level security); no
    role but the owner can truncate it."""
    p.execute("CREATE TABLE public.bf_owned (id int PRIMARY KEY, xid idgen.xid12)")
    p.execute("INSERT INTO public.bf_owned SELECT g FROM generate_series(1, 100) g")
    p.execute("CALL idgen.idgen_backfill('public.bf_owned', 'xid', 'idgen.gen_xid12()')")
    w.execute("CREATE TABLE bf_w.guarded (id int PRIMARY KEY, xid idgen.xid12)")
    w.execute("INSERT INTO bf_w.guarded SELECT g FROM generate_series(1, 100) g")
    got = error_of(o, "CALL idgen.idgen_backfill('bf_w.guarded', 'xid', 'idgen.gen_xid12()')")
    check(got is not None and got[0] == "42501", f"another role, no USAGE on the table's schema: {got}")
    w.execute("GRANT USAGE ON SCHEMA bf_w TO idgen_other")
    w.execute("GRANT SELECT ON bf_w.guarded TO idgen_other")
    got = error_of(o, "CALL idgen.idgen_backfill('bf_w.guarded', 'xid', 'idgen.gen_xid12()')")
    check(got is not None and got[0] == "42501", f"another role, SELECT but no UPDATE on the table: {got}")
    check(one(w, "SELECT count(xid) FROM bf_w.guarded")[0] == 0, "another role filled rows of bf_w.guarded")
    state = "SELECT relation::text, target_column, run_by, rows_done FROM idgen.idgen_backfill_progress ORDER BY 1, 2, 3"
    before = p.execute(state).fetchall()
    seen = one(o, "SELECT count(*) FILTER (WHERE run_by = 'idgen_writer'), count(*) FILTER (WHERE run_by = 'idgen_owner') "
                  "FROM idgen.idgen_backfill_progress")
    check(seen[0] > 0 and seen[1] > 0, f"another role reads every run's progress: {seen}")
    row = """INSERT INTO idgen.idgen_backfill_progress (relation, target_column, run_by, pid, started_at, updated_at,
        reported_at, batches, rows_done, rows_total) VALUES ('idgen.idgen_config'::regclass, 'x', %s, 0, now(), now(), now(), 0, 0, 0)"""
    for conn, role, theirs in ((o, "idgen_other", "idgen_writer"), (w, "idgen_writer", "idgen_owner")):
        sql = f"UPDATE idgen.idgen_backfill_progress SET rows_done = 0 WHERE run_by = '{theirs}'"
        changed = conn.execute(sql).rowcount
        check(changed == 0, f"{role}: {sql}: {changed} rows")
        got = error_of(conn, f"DELETE FROM idgen.idgen_backfill_progress WHERE run_by = '{theirs}'")
        check(got is not None and got[0] == "42501", f"{role} deletes rows of {theirs}: {got}")
        got = error_of(conn, row, (theirs,))
        check(got is not None and got[0] == "42501", f"{role} inserts a row of {theirs}: {got}")
        # Its own row: written, not given away, not deleted (no DELETE: the owner clears it).
        check(error_of(conn, row, (role,)) is None, f"{role} cannot write its own progress row")
        got = error_of(conn, f"UPDATE idgen.idgen_backfill_progress SET run_by = '{theirs}' WHERE run_by = '{role}'")
        check(got is not None and got[0] == "42501", f"{role} gives its row to {theirs}: {got}")
        got = error_of(conn, "DELETE FROM idgen.idgen_backfill_progress WHERE target_column = 'x'")
        check(got is not None and got[0] == "42501", f"{role} deletes its own row: {got}")
        p.execute("DELETE FROM idgen.idgen_backfill_progress WHERE target_column = 'x'")
        got = error_of(conn, "TRUNCATE idgen.idgen_backfill_progress")
        check(got is not None and got[0] == "42501", f"{role} truncates the progress: {got}")
    after = p.execute(state).fetchall()
    check(after == before, f"progress rows changed by the other roles' attempts: {before} -> {after}")
    # The owner clears them.
    p.execute("""DELETE FROM idgen.idgen_backfill_progress WHERE relation::oid =
        (SELECT c.oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = 'bf_w' AND c.relname = 'target')""")
    print("rights: another role cannot fill a table it may not update (42501); it reads every run's progress, "
          "changes none of another role's rows, cannot insert one, delete any or truncate (42501)")


def spy(schema: str) -> str:
    """What each planted object calls: counts itself in a sequence (no rollback undoes it),
    records who it ran as (when it can), and warns."""
    return f"""CREATE FUNCTION {schema}.spy(what text) RETURNS boolean LANGUAGE plpgsql AS $b$
        BEGIN
            PERFORM pg_catalog.nextval('{schema}.ran');
            BEGIN
                INSERT INTO {schema}.seen VALUES (what, current_user);
            EXCEPTION WHEN OTHERS THEN NULL;
            END;
            RAISE WARNING 'planted code ran (%) as %', what, current_user;
            RETURN true;
        END $b$"""


def planted_ran(o, schema: str) -> tuple:
    return one(o, f"""SELECT (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM {schema}.ran),
        (SELECT count(*) FROM {schema}.seen)""")


def hostile_search_path(w, o) -> None:
    """Operators and types that the batch statements and the procedure's variables name, planted
    by another role in a schema first on the caller's search_path: none runs (native's
    tests/regress/sql/search_path.sql), on an index walk, a sorted walk, a partitioned table and
    a temporary table (a table named like it in the hostile schema, with a trigger)."""
    h = "bf_hostile"
    o.execute(f"CREATE SCHEMA {h}")
    o.execute(f"GRANT USAGE ON SCHEMA {h} TO PUBLIC")
    o.execute(f"CREATE SEQUENCE {h}.ran")
    o.execute(f"CREATE TABLE {h}.seen (what text, run_as name)")
    o.execute(f"GRANT USAGE ON SEQUENCE {h}.ran TO PUBLIC")
    o.execute(f"GRANT INSERT ON {h}.seen TO PUBLIC")
    o.execute(spy(h))
    for name, args, ret, value in (
        ("int_cmp", "integer, integer", "boolean", "true"), ("int_add", "integer, integer", "integer", "0"),
        ("big_cmp", "bigint, bigint", "boolean", "true"), ("big_arith", "bigint, bigint", "bigint", "0"),
        ("text_cmp", "text, text", "boolean", "false"), ("text_cat", "text, text", "text", "''"),
    ):
        o.execute(f"""CREATE FUNCTION {h}.{name}({args}) RETURNS {ret} LANGUAGE plpgsql AS $b$
            BEGIN PERFORM {h}.spy('{name}'); RETURN {value}; END $b$""")
    operators = (
        (">=", "integer", "int_cmp"), (">", "integer", "int_cmp"), ("=", "integer", "int_cmp"), ("+", "integer", "int_add"),
        (">", "bigint", "big_cmp"), (">=", "bigint", "big_cmp"), ("<=", "bigint", "big_cmp"), ("=", "bigint", "big_cmp"),
        ("+", "bigint", "big_arith"), ("-", "bigint", "big_arith"), ("*", "bigint", "big_arith"),
        ("=", "text", "text_cmp"), ("<>", "text", "text_cmp"), ("||", "text", "text_cat"),
    )
    for op, typ, fn in operators:
        o.execute(f"CREATE OPERATOR {h}.{op} (LEFTARG = {typ}, RIGHTARG = {typ}, FUNCTION = {h}.{fn})")
    o.execute(f"CREATE FUNCTION {h}.check() RETURNS boolean LANGUAGE plpgsql AS $b$ BEGIN RETURN {h}.spy('domain'); END $b$")
    domains = ("text", "tid", "regtype", "regclass", "name")
    for typ in domains:
        o.execute(f"CREATE DOMAIN {h}.{typ} AS pg_catalog.{typ} CHECK ({h}.check())")
    o.execute(f"CREATE TABLE {h}.scratch (id int PRIMARY KEY, xid idgen.xid12)")
    o.execute(f"INSERT INTO {h}.scratch SELECT g FROM generate_series(1, 300) g")
    o.execute(f"CREATE FUNCTION {h}.spy_trigger() RETURNS trigger LANGUAGE plpgsql AS $b$ BEGIN PERFORM {h}.spy(TG_OP); RETURN NEW; END $b$")
    o.execute(f"CREATE TRIGGER spy BEFORE UPDATE ON {h}.scratch FOR EACH ROW EXECUTE FUNCTION {h}.spy_trigger()")
    o.execute(f"GRANT ALL ON {h}.scratch TO PUBLIC")
    live = o.execute(f"SET search_path = {h}, pg_catalog").execute("SELECT 1 = 1").fetchone()[0]
    o.execute("RESET search_path")
    check(planted_ran(o, h) == (1, 1) and live is True, "the planted integer = is not live")
    o.execute(f"SELECT setval('{h}.ran', 1, false)")
    o.execute(f"DELETE FROM {h}.seen")

    w.execute("CREATE TABLE bf_w.walked (id integer PRIMARY KEY, made timestamptz NOT NULL, x idgen.xid12)")
    w.execute("CREATE INDEX ON bf_w.walked (made)")
    w.execute("CREATE TABLE bf_w.unwalked (id integer PRIMARY KEY, made timestamptz NOT NULL, x idgen.xid12)")
    w.execute("""CREATE TABLE bf_w.parted (id integer, made timestamptz NOT NULL, x idgen.xid12, PRIMARY KEY (id, made))
        PARTITION BY RANGE (made)""")
    w.execute("CREATE TABLE bf_w.parted_1 PARTITION OF bf_w.parted FOR VALUES FROM ('2026-01-01') TO ('2026-01-01 02:00')")
    w.execute("CREATE TABLE bf_w.parted_2 PARTITION OF bf_w.parted DEFAULT")
    for t in ("walked", "unwalked", "parted"):
        w.execute(f"""INSERT INTO bf_w.{t} SELECT g, '2026-01-01'::timestamptz + (301 - g) * interval '1 minute'
            FROM generate_series(1, 300) g""")
    notices: list = []
    calls = [
        (f"{h}, pg_catalog", "CALL idgen.idgen_backfill('bf_w.walked', 'x', 'idgen.gen_xid12(made)', batch_size => 100)"),
        (None, "UPDATE bf_w.walked SET x = NULL WHERE id > 150"),
        (f"{h}, pg_catalog", """CALL idgen.idgen_backfill('bf_w.walked', 'x', 'idgen.gen_xid12(made)', batch_size => 100,
            order_by => 'made')"""),
        (f"{h}, pg_catalog", """CALL idgen.idgen_backfill('bf_w.unwalked', 'x', 'idgen.gen_xid12(made)', batch_size => 100,
            order_by => 'made')"""),
        (f"{h}, pg_catalog", """CALL idgen.idgen_backfill('bf_w.parted', 'x', 'idgen.gen_xid12(made)', batch_size => 100,
            order_by => 'made')"""),
    ]
    errors = []
    for path, sql in calls:
        # A new session for each: PL/pgSQL resolves the procedure's variable types when it
        # first compiles it in a session.
        with connect(WRITER, notices) as c:
            if path:
                c.execute(f"SET search_path = {path}")
            got = error_of(c, sql)
            if got:
                errors.append((sql, got))
    with connect(WRITER, notices) as c:
        c.execute("CREATE TEMPORARY TABLE scratch (id int PRIMARY KEY, xid idgen.xid12)")
        c.execute("INSERT INTO pg_temp.scratch SELECT g FROM generate_series(1, 300) g")
        c.execute(f"SET search_path = {h}, pg_temp, pg_catalog")
        got = error_of(c, "CALL idgen.idgen_backfill('pg_temp.scratch', 'xid', 'idgen.gen_xid12()', batch_size => 100)")
        if got:
            errors.append(("pg_temp.scratch", got))
        c.execute("RESET search_path")
        temp_filled = one(c, "SELECT count(DISTINCT xid) FROM pg_temp.scratch")[0]
    check(not errors, f"calls with the planted objects first on the path: {errors}")
    ran = planted_ran(o, h)
    warned = [x for x in notices if "planted code ran" in (x or "")]
    check(ran == (0, 0) and not warned, f"planted objects ran: {ran}, {warned[:3]}")
    for t in ("walked", "unwalked", "parted"):
        got = one(w, f"""SELECT count(DISTINCT x), count(*) FILTER (WHERE idgen.xid12_time(x) = made),
            bool_and(x > prior) FROM (SELECT x, made, lag(x) OVER (ORDER BY made) AS prior FROM bf_w.{t}) s""")
        check(got == (300, 300, True), f"{t} filled under the hostile path: {got}")
    hostile_filled = one(w, f"SELECT count(xid) FROM {h}.scratch")[0]
    check(temp_filled == 300 and hostile_filled == 0, f"temporary table filled: {temp_filled}; {h}.scratch: {hostile_filled}")
    work_left = one(w, r"SELECT count(*) FROM pg_class WHERE relname ~ '^idgen_backfill_[0-9]+_[0-9]+$'")[0]
    check(work_left == 0, f"{work_left} work tables left")
    o.execute(f"DROP SCHEMA {h} CASCADE")
    print(f"hostile search_path: {len(operators)} operators and {len(domains)} domains of another role first on the caller's path ran nothing "
          f"over {len(calls) - 1} runs (index, sorted, partitioned) and a temporary table; all filled, in order")


class Planted:
    """Issue 33 (native tests/client/test_backfill.py): the schema bf_planted belongs to
    idgen_other, the untrusted planter, and the writer (and the owner) may CREATE there. The
    planter can drop any relation in its schema, the caller's work table and table too, and make
    one of that name: a table with a trigger and a row-level security policy, or a view, whose
    code would run as the caller. idgen_backfill must never read or write it."""

    S = "bf_planted"

    def __init__(self, o):
        self.o = o
        o.execute(f"CREATE SCHEMA {self.S}")
        o.execute(f"GRANT USAGE, CREATE ON SCHEMA {self.S} TO idgen_writer, idgen_owner")
        o.execute(f"CREATE SEQUENCE {self.S}.ran")
        o.execute(f"CREATE TABLE {self.S}.seen (what text, run_as name)")
        o.execute(f"GRANT USAGE ON SEQUENCE {self.S}.ran TO PUBLIC")
        o.execute(f"GRANT INSERT ON {self.S}.seen TO PUBLIC")
        o.execute(spy(self.S))
        o.execute(f"""CREATE FUNCTION {self.S}.spy_trigger() RETURNS trigger LANGUAGE plpgsql AS $b$
            BEGIN PERFORM {self.S}.spy(TG_OP); RETURN NULL; END $b$""")

    def table(self, conn, name: str, partitioned: bool = False) -> str:
        """The caller's table (conn's role), ids 1..3000 in created_at order; its work table's name."""
        t = f"{self.S}.{name}"
        conn.execute(f"""CREATE TABLE {t} (id int PRIMARY KEY, created_at timestamptz NOT NULL, xid idgen.xid12)
            {"PARTITION BY RANGE (id)" if partitioned else ""}""")
        if partitioned:
            conn.execute(f"CREATE TABLE {t}_a PARTITION OF {t} FOR VALUES FROM (MINVALUE) TO (1500)")
            conn.execute(f"CREATE TABLE {t}_b PARTITION OF {t} FOR VALUES FROM (1500) TO (MAXVALUE)")
        conn.execute(f"INSERT INTO {t} SELECT g, '2025-01-01'::timestamptz + g * interval '1 minute' FROM generate_series(1, 3000) g")
        return one(conn, f"""SELECT format('idgen_backfill_%%s_%%s', '{t}'::regclass::oid,
            (SELECT attnum FROM pg_attribute WHERE attrelid = '{t}'::regclass AND attname = 'xid'))""")[0]

    def plant(self, work: str, kind: str, drop: bool = False) -> None:
        """The planter: (the caller's work table dropped) a relation named like it, whose one
        chunk of keys reads as the next batch."""
        q = f"{self.S}.{work}"
        sql = [f"DROP TABLE IF EXISTS {q}"] if drop else []
        if kind == "table":
            sql += [f"CREATE TABLE {q} (idgen_chunk bigint PRIMARY KEY, idgen_k1 int[] NOT NULL)",
                    f"INSERT INTO {q} VALUES (0, ARRAY[2999, 3000])",
                    f"""CREATE TRIGGER spy BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON {q}
                        FOR EACH STATEMENT EXECUTE FUNCTION {self.S}.spy_trigger()""",
                    f"ALTER TABLE {q} ENABLE ROW LEVEL SECURITY",
                    f"CREATE POLICY spy ON {q} USING ({self.S}.spy('read'))"]
        else:
            sql += [f"""CREATE VIEW {q} AS SELECT 0::bigint AS idgen_chunk, ARRAY[2999, 3000] AS idgen_k1
                WHERE {self.S}.spy('view')"""]
        sql.append(f"GRANT ALL ON {q} TO PUBLIC")
        with connect(OTHER) as c, c.transaction():
            for s in sql:
                c.execute(s)

    def unplant(self, work: str, kind: str) -> None:
        self.o.execute(f"DROP {'TABLE' if kind == 'table' else 'VIEW'} IF EXISTS {self.S}.{work}")

    def call(self, dsn: str, sql: str, during=None):
        """Runs sql as dsn's role; (its error, its notices). With during: the row id 3000 (the last
        batch's) is held; once the run waits for it, during() starts (it may wait for the run's
        locks); then the row is let go."""
        notices, errors, pid = [], [], []

        def run():
            with connect(dsn, notices) as c:
                pid.append(c.info.backend_pid)
                got = error_of(c, sql)
                if got:
                    errors.append(got)

        if during is None:
            run()
            return (errors or [None])[0], notices
        table = re.search(r"idgen_backfill\('([^']+)'", sql).group(1)
        with connect(dsn) as holder:
            holder.execute("BEGIN")
            holder.execute(f"SELECT FROM {table} WHERE id = 3000 FOR UPDATE")
            runner = threading.Thread(target=run)
            runner.start()
            deadline = time.monotonic() + 120
            with connect(dsn) as watcher:
                while not (pid and one(watcher, "SELECT wait_event_type = 'Lock' FROM pg_stat_activity WHERE pid = %s",
                                       pid)[0]):
                    if not runner.is_alive() or time.monotonic() > deadline:
                        holder.execute("ROLLBACK")
                        runner.join()
                        return ("the run did not reach row 3000", errors), notices
                    time.sleep(0.02)
            planting = threading.Thread(target=during)
            planting.start()
            planting.join(2)  # done, or waiting for the lock the run's batch holds
            holder.execute("ROLLBACK")
        planting.join()
        runner.join()
        return (errors or [None])[0], notices

    def refused(self, what: str, got, notices, work: str, kind: str, swapped: bool = False) -> None:
        """The planted code never ran, the planted table is as planted, and the run failed with
        42P07 naming it and why."""
        ran = planted_ran(self.o, self.S)
        warned = [x for x in notices if "planted code ran" in (x or "")]
        check(ran == (0, 0) and not warned, f"{what}: the planted code ran: {ran} {warned[:2]}")
        if kind == "table":
            rows = self.o.execute(f"SELECT idgen_chunk, idgen_k1 FROM {self.S}.{work}").fetchall()
            check(rows == [(0, [2999, 3000])], f"{what}: the planted table changed: {rows}")
        detail = (got[2] or "") if isinstance(got, tuple) and len(got) == 3 else ""
        why = ("owned by role idgen_other" if kind == "table" else "It is a view") in detail or (
            swapped and "while it was being checked" in detail)
        check(isinstance(got, tuple) and got[0] == "42P07"
              and f'relation "{self.S}.{work}" exists' in (got[1] or "") and why, f"{what}: {got}")


def planted(p, w, o) -> None:
    pl = Planted(o)
    runs = 0
    # Before the run (an index walk, whose closing sweep has a work table), as the writer and as
    # the owner: refused before the first batch.
    for role, dsn, conn in (("writer", WRITER, w), ("owner", OWNER, p)):
        for kind in ("table", "view"):
            work = pl.table(conn, f"before_{role}_{kind}")
            pl.plant(work, kind)
            got, notices = pl.call(dsn, f"""CALL idgen.idgen_backfill('{pl.S}.before_{role}_{kind}', 'xid',
                'idgen.gen_xid12(created_at)', batch_size => 500)""")
            pl.refused(f"planted before a run ({role}, {kind})", got, notices, work, kind)
            filled = one(conn, f"SELECT count(xid) FROM {pl.S}.before_{role}_{kind}")[0]
            check(filled == 0, f"planted before a run ({role}, {kind}): {filled} rows filled")
            pl.unplant(work, kind)
            runs += 1
    # During the run, just before its last batch (the caller's own work table dropped first, for
    # the walks that have one): the index walk's closing sweep, or the sorted walk's next batch.
    for walk in ("index", "sorted", "partitioned"):
        for kind in ("table", "view"):
            name = f"during_{walk}_{kind}"
            work = pl.table(w, name, partitioned=walk == "partitioned")
            order = "" if walk == "index" else ", order_by => 'created_at'"
            got, notices = pl.call(WRITER, f"""CALL idgen.idgen_backfill('{pl.S}.{name}', 'xid',
                'idgen.gen_xid12(created_at)', batch_size => 500, lock_timeout => '10min'{order})""",
                                   during=lambda: pl.plant(work, kind, drop=walk != "index"))
            what = f"planted during a run ({walk} walk, {kind})"
            pl.refused(what, got, notices, work, kind, swapped=walk != "index")
            filled = one(w, f"""SELECT count(*), count(*) FILTER (WHERE created_at < before), count(DISTINCT xid) FROM (
                SELECT xid, created_at, lag(created_at) OVER (ORDER BY xid) AS before FROM {pl.S}.{name}
                WHERE xid IS NOT NULL) s""")
            check(filled == (3000, 0, 3000), f"{what}: the batches before it (filled, out of order, distinct): {filled}")
            pl.unplant(work, kind)
            runs += 1
    # The table itself dropped and made again by the planter during the run, with a row to fill
    # and a trigger: the run stops (42P01) before any statement reads or writes it.
    for walk in ("index", "sorted"):
        name = f"replaced_{walk}"
        pl.table(w, name)
        t = f"{pl.S}.{name}"

        def replace():
            with connect(OTHER) as c, c.transaction():
                c.execute(f"DROP TABLE {t}")
                c.execute(f"CREATE TABLE {t} (id int PRIMARY KEY, created_at timestamptz NOT NULL, xid idgen.xid12)")
                c.execute(f"INSERT INTO {t} VALUES (3001, '2030-01-01', NULL)")
                c.execute(f"""CREATE TRIGGER spy BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON {t}
                    FOR EACH STATEMENT EXECUTE FUNCTION {pl.S}.spy_trigger()""")
                c.execute(f"GRANT ALL ON {t} TO PUBLIC")
        order = "" if walk == "index" else ", order_by => 'created_at'"
        got, notices = pl.call(WRITER, f"""CALL idgen.idgen_backfill('{t}', 'xid', 'idgen.gen_xid12(created_at)',
            batch_size => 500, lock_timeout => '10min'{order})""", during=replace)
        ran = planted_ran(o, pl.S)
        rows = o.execute(f"SELECT id, xid FROM {t}").fetchall()
        check(ran == (0, 0) and rows == [(3001, None)]
              and got == ("42P01", f'relation "{t}" was dropped while idgen_backfill filled it',
                          "Another relation of that name was made since; it was not read or written."),
              f"table replaced during a run ({walk} walk): {got}; planted code ran {ran}; its rows {rows}")
        o.execute(f"DROP TABLE {t}")
        runs += 1
    # A sorted walk cancelled in the middle leaves the caller's work table; the planter drops it
    # and plants its own: the resumed run is refused, the rows filled before unchanged.
    work = pl.table(w, "resumed")
    call = (f"CALL idgen.idgen_backfill('{pl.S}.resumed', 'xid', 'idgen.gen_xid12(created_at)', batch_size => 500, "
            "order_by => 'created_at', lock_timeout => '10min')")

    def cancel():
        with connect(WRITER) as c:
            c.execute("SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                      "AND usename = 'idgen_writer' AND query LIKE 'CALL idgen.idgen_backfill%'")
    got, _ = pl.call(WRITER, call, during=cancel)
    before = w.execute(f"SELECT id, xid FROM {pl.S}.resumed WHERE xid IS NOT NULL ORDER BY id").fetchall()
    left = one(w, f"SELECT count(*) FROM pg_class WHERE relname = '{work}' AND relowner = 'idgen_writer'::regrole")[0]
    check(got is not None and got[0] == "57014" and len(before) == 2500 and left == 1,
          f"cancelled sorted walk: {got}, {len(before)} rows filled, work table left: {left}")
    pl.plant(work, "table", drop=True)
    got, notices = pl.call(WRITER, call)
    pl.refused("planted before a resumed run", got, notices, work, "table")
    after = w.execute(f"SELECT id, xid FROM {pl.S}.resumed WHERE xid IS NOT NULL ORDER BY id").fetchall()
    check(after == before, "planted before a resumed run: the rows filled before changed")
    runs += 1
    p.execute(f"""DELETE FROM idgen.idgen_backfill_progress
        WHERE relation::oid IN (SELECT oid FROM pg_class WHERE relnamespace = '{pl.S}'::regnamespace)""")
    o.execute(f"DROP SCHEMA {pl.S} CASCADE")
    print(f"planted by the schema's owner: {runs} runs (before, during, table replaced, resumed; as the writer and "
          f"as the owner): every one refused (42P07, 42P01), no planted code ran")


def main():
    global OWNER, WRITER, OTHER
    OWNER = sys.argv[1]
    WRITER, OTHER = os.environ.get("PORTABLE_WRITER_DSN"), os.environ.get("PORTABLE_OTHER_DSN")
    if not WRITER or not OTHER:
        sys.exit("test_backfill.py needs PORTABLE_WRITER_DSN and PORTABLE_OTHER_DSN")
    n = connect(sys.argv[2]) if len(sys.argv) > 2 else None
    p = connect(OWNER)
    database = one(p, "SELECT current_database()")[0]
    for sql in ("GRANT USAGE ON SCHEMA idgen TO idgen_writer, idgen_other",
                "GRANT EXECUTE ON FUNCTION idgen.gen_xid12(), idgen.gen_xid12(timestamptz), idgen.gen_snowflake() TO idgen_writer",
                f'GRANT CREATE ON DATABASE "{database}" TO idgen_writer, idgen_other',
                # Both create tables with xid12 columns (portable/README.md "Security").
                "GRANT USAGE ON DOMAIN idgen.xid12 TO idgen_writer, idgen_other"):
        p.execute(sql)
    p.execute("UPDATE idgen.idgen_config SET worker_id = 378 WHERE worker_id IS NULL")
    w, o = connect(WRITER), connect(OTHER)
    w.execute("CREATE SCHEMA bf_w")
    started = time.monotonic()
    generator()
    install(p)
    live(w, n)
    cancel_then_resume(w)
    statement_timeouts(w)
    bad_arguments(w)
    rights(p, w, o)
    hostile_search_path(w, o)
    planted(p, w, o)
    w.execute("DROP SCHEMA bf_w CASCADE")
    p.execute("DROP TABLE public.bf_owned")
    p.execute("DELETE FROM idgen.idgen_backfill_progress")
    p.execute("REVOKE USAGE ON DOMAIN idgen.xid12 FROM idgen_writer, idgen_other")
    print(f"backfill: {checks} checks, {len(failures)} failures ({time.monotonic() - started:.0f} s)")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
