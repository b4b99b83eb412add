"""idgen_backfill on live tables: batches in creation order while the application writes,
resuming after a cancel, rapkey and Snowflake backfills, bad arguments, and the README's
migration playbook run as written."""
import os
import re
import subprocess
import threading
import time
from pathlib import Path

import psycopg
import pytest

from servers import connect, fresh_database

# The scale; PG_IDGEN_BACKFILL_ROWS makes a quicker run (scripts/test.sh: 200,000 on the
# versions before 18, see conftest.py).
ROWS = int(os.environ.get("PG_IDGEN_BACKFILL_ROWS", "1000000"))
README = Path(__file__).parents[2] / "README.md"


@pytest.fixture(scope="module")
def db():
    return fresh_database("backfill_tests", extension=True)


def legacy_table(conn, name: str, rows: int, index: bool = True) -> None:
    """A table keyed by a random uuid, created_at spread over a year (with an index on it unless
    index is False), and a new xid12 column."""
    conn.execute(f"DROP TABLE IF EXISTS {name}")
    conn.execute(f"""CREATE TABLE {name} (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        payload integer NOT NULL DEFAULT 0,
        legacy boolean NOT NULL DEFAULT false)""")
    conn.execute(f"""INSERT INTO {name} (created_at, legacy)
        SELECT '2025-01-01'::timestamptz + random() * interval '365 days', true FROM generate_series(1, {rows})""")
    if index:
        conn.execute(f"CREATE INDEX ON {name} (created_at)")
    conn.execute(f"VACUUM ANALYZE {name}")
    conn.execute(f"ALTER TABLE {name} ADD COLUMN xid xid12")


def numbered_table(conn, name: str, rows: int) -> None:
    """A table keyed by 1..rows, with an empty xid12 column to fill."""
    conn.execute(f"CREATE TABLE {name} (id int PRIMARY KEY, xid xid12)")
    conn.execute(f"INSERT INTO {name} SELECT g FROM generate_series(1, {rows}) g")


def out_of_order(conn, table: str) -> int:
    """Rows whose created_at is earlier than that of the row before them in xid order, except
    where the README says it may be: two ids of one second on either side of a wrap of the
    24-bit counter (gen_xid12(timestamptz) keeps its second), whose counters are then more
    than half the counter's range apart."""
    return conn.execute(f"""SELECT count(*) FROM (
        SELECT created_at, xid, lag(created_at) OVER w AS before, lag(xid) OVER w AS before_xid
        FROM {table} WHERE legacy WINDOW w AS (ORDER BY xid)) s
        WHERE created_at < before
          AND NOT (xid12_time(xid) = xid12_time(before_xid)
                   AND xid12_counter(xid) - xid12_counter(before_xid) > 8388608)""").fetchone()[0]


def test_backfill_while_the_application_writes(db):
    with connect(dbname=db) as conn:
        legacy_table(conn, "live", ROWS)
        conn.execute("ALTER TABLE live ALTER COLUMN xid SET DEFAULT gen_xid12()")
        sample = [r[0] for r in conn.execute("SELECT id FROM live ORDER BY random() LIMIT 5000")]

    notices = []
    batches = Batches()
    with Writer(db, "live", sample, pause_s=0) as writer:
        writer.runs.append(batches)
        with connect(dbname=db) as conn:
            conn.add_notice_handler(lambda d: notices.append(d.message_primary))
            conn.add_notice_handler(batches.notice)
            conn.execute("CALL idgen_backfill('live', 'xid', 'gen_xid12(created_at)', "
                         "order_by => 'created_at', report_every => '0')")

    with connect(dbname=db) as conn:
        total, filled, distinct = conn.execute(
            "SELECT count(*), count(xid), count(DISTINCT xid) FROM live").fetchone()
        assert total == ROWS + writer.inserted
        assert filled == total and distinct == total
        assert conn.execute("""SELECT count(*) FROM live
            WHERE legacy AND xid12_time(xid) <> date_trunc('second', created_at)""").fetchone()[0] == 0
        assert out_of_order(conn, "live") == 0
        stored = dict(conn.execute("SELECT id, payload FROM live WHERE payload > 0").fetchall())
        assert stored == writer.updates, "a concurrent update was lost"
        done = conn.execute("""SELECT rows_done, rows_total, finished_at IS NOT NULL, batches
            FROM idgen_backfill_progress WHERE relation = 'live'::regclass""").fetchone()
        assert done == (ROWS, ROWS, True, -(-ROWS // 5000)), done
    # One notice per batch (report_every => '0'), then the closing one.
    assert len(batches.marks) == 1 + -(-ROWS // 5000) + 1, len(batches.marks)
    assert re.fullmatch(rf"idgen_backfill public\.live\.xid: {ROWS} of {ROWS} rows in [0-9.]+ s, done", notices[-1])


def test_cancel_then_resume(db):
    rows = 100_000
    with connect(dbname=db) as conn:
        legacy_table(conn, "resumed", rows)
    runner_pid = []
    failures = []

    def run():
        with connect(dbname=db) as c:
            runner_pid.append(c.info.backend_pid)
            try:
                c.execute("CALL idgen_backfill('resumed', 'xid', 'gen_xid12(created_at)', "
                          "batch_size => 1000, order_by => 'created_at', pause => '10ms', lock_timeout => '10min')")
            except psycopg.Error as e:
                failures.append(e)

    # The run stops at a row another session holds (25,000th in the walk's order), so the
    # cancel lands in the middle of it however slowly the watcher gets there.
    thread = threading.Thread(target=run)
    with RowHolder(db, "resumed", 25_000), connect(dbname=db) as watcher:
        thread.start()
        try:
            # Another session sees the progress while the run goes on.
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                seen = watcher.execute("""SELECT rows_done, rows_total, pid FROM idgen_backfill_progress
                    WHERE relation = 'resumed'::regclass AND finished_at IS NULL""").fetchone()
                if seen and seen[0] >= 20_000:
                    break
                time.sleep(0.05)
            assert seen and seen[0] >= 20_000 and seen[1] == rows and seen[2] == runner_pid[0], (
                f"expected the run's progress at 20000 rows or more within 120 s, saw {seen} ({failures})")
        finally:
            if runner_pid:
                watcher.execute("SELECT pg_cancel_backend(%s)", (runner_pid[0],))
            thread.join()
        assert len(failures) == 1 and isinstance(failures[0], psycopg.errors.QueryCanceled), failures
    with connect(dbname=db) as watcher:
        before = dict(watcher.execute("SELECT id, xid FROM resumed WHERE xid IS NOT NULL").fetchall())
        assert 20_000 <= len(before) < rows
        watcher.execute("CALL idgen_backfill('resumed', 'xid', 'gen_xid12(created_at)', order_by => 'created_at')")
        after = dict(watcher.execute("SELECT id, xid FROM resumed").fetchall())
        assert len(after) == rows and None not in after.values()
        assert len(set(after.values())) == rows
        assert all(after[k] == v for k, v in before.items()), "a row filled before the cancel changed"
        assert watcher.execute("""SELECT rows_done FROM idgen_backfill_progress
            WHERE relation = 'resumed'::regclass""").fetchone()[0] == rows - len(before)


@pytest.fixture(scope="module")
def numbered(db):
    with connect(dbname=db) as conn:
        conn.execute("""CREATE TABLE numbered (id bigserial PRIMARY KEY, created_at timestamptz NOT NULL,
            k rapkey, flake bigint)""")
        conn.execute("""INSERT INTO numbered (created_at)
            SELECT '2025-01-01'::timestamptz + random() * interval '90 days' FROM generate_series(1, 20000)""")
    return "numbered"


def test_rapkey_backfill(db, numbered):
    with connect(dbname=db) as conn:
        conn.execute("""CALL idgen_backfill('numbered', 'k',
            $$rapkey_next('ord.cn.' || to_char(created_at, 'YYYYMM'))$$, batch_size => 700)""")
        # Per month, numbers 1..n without gaps, given out in the walk's order (the primary key).
        months = conn.execute("""SELECT to_char(created_at, 'YYYYMM'),
                array_agg(rapkey_segment(k, 3)::int ORDER BY id) = array_agg(n::int ORDER BY n),
                bool_and(k::text LIKE 'ord.cn.' || to_char(created_at, 'YYYYMM') || '.%')
            FROM (SELECT *, row_number() OVER (PARTITION BY to_char(created_at, 'YYYYMM') ORDER BY id) n
                  FROM numbered) s GROUP BY 1""").fetchall()
        assert len(months) == 3 and all(contiguous and prefixed for _, contiguous, prefixed in months), months


def test_snowflake_backfill(db, numbered, worker_42):
    with connect(dbname=db) as conn:
        conn.execute("CALL idgen_backfill('numbered', 'flake', 'gen_snowflake()', batch_size => 700)")
        assert conn.execute("SELECT count(DISTINCT flake), count(flake) FROM numbered").fetchone() == (20000, 20000)
        assert conn.execute("""SELECT count(*) FROM (SELECT flake, lag(flake) OVER (ORDER BY id) AS before
            FROM numbered) s WHERE flake < before""").fetchone()[0] == 0


def test_identifiers_are_quoted(db):
    with connect(dbname=db) as conn:
        conn.execute('CREATE SCHEMA "Odd Schema"')
        conn.execute('CREATE TABLE "Odd Schema"."Odd Table" ("Key; Col" int PRIMARY KEY, "New Id" xid12, "When" timestamptz)')
        conn.execute('INSERT INTO "Odd Schema"."Odd Table" SELECT g, NULL, now() - g * interval \'1 minute\' FROM generate_series(1, 3000) g')
        conn.execute("""CALL idgen_backfill('"Odd Schema"."Odd Table"', 'New Id', 'gen_xid12("When")',
            batch_size => 1000, order_by => 'When')""")
        assert conn.execute('SELECT count(DISTINCT "New Id") FROM "Odd Schema"."Odd Table"').fetchone()[0] == 3000
        assert conn.execute("""SELECT count(*) FROM (SELECT "When", lag("When") OVER (ORDER BY "New Id") AS before
            FROM "Odd Schema"."Odd Table") s WHERE "When" < before""").fetchone()[0] == 0


def test_statement_timeout_applies_to_each_batch(db):
    with connect(dbname=db) as conn:
        numbered_table(conn, "timed", 1000)
        conn.execute("""CREATE FUNCTION slow_xid(seconds float8) RETURNS xid12 LANGUAGE sql VOLATILE
            AS $$ SELECT gen_xid12() FROM pg_sleep(seconds) $$""")
        # A batch longer than its statement_timeout is cancelled, and nothing of it stays.
        with pytest.raises(psycopg.errors.QueryCanceled):
            conn.execute("""CALL idgen_backfill('timed', 'xid', 'slow_xid(0.01)', batch_size => 200,
                statement_timeout => '300ms')""")
        assert conn.execute("SELECT count(xid) FROM timed").fetchone()[0] == 0
        # The session's statement_timeout would cancel the whole CALL; each batch re-arms the
        # timer with the procedure's own value instead, so a run longer than it finishes.
        conn.execute("SET statement_timeout = '1s'")
        conn.execute("""CALL idgen_backfill('timed', 'xid', 'slow_xid(0.002)', batch_size => 100,
            statement_timeout => '30s')""")
        conn.execute("RESET statement_timeout")
        assert conn.execute("SELECT count(DISTINCT xid) FROM timed").fetchone()[0] == 1000


def test_waits_for_a_locked_row_then_finishes(db):
    with connect(dbname=db) as conn:
        numbered_table(conn, "held", 3000)
    with connect(dbname=db) as holder:
        holder.execute("BEGIN")
        holder.execute("SELECT * FROM held WHERE id = 1500 FOR UPDATE")
        releaser = threading.Timer(2.0, lambda: holder.execute("COMMIT"))
        releaser.start()
        with connect(dbname=db) as conn:
            # Each batch that reaches row 1500 times out after 500 ms, is rolled back and
            # retried, until the holder commits.
            conn.execute("CALL idgen_backfill('held', 'xid', 'gen_xid12()', batch_size => 1000)")
            releaser.join()
            assert conn.execute("SELECT count(DISTINCT xid) FROM held").fetchone()[0] == 3000
            assert conn.execute("""SELECT batches FROM idgen_backfill_progress
                WHERE relation = 'held'::regclass""").fetchone()[0] == 3


def test_gives_up_after_20_lock_timeouts_in_a_row(db):
    with connect(dbname=db) as conn:
        numbered_table(conn, "stuck", 300)
    with connect(dbname=db) as holder:
        holder.execute("BEGIN")
        holder.execute("SELECT * FROM stuck WHERE id = 1 FOR UPDATE")
        with connect(dbname=db) as conn:
            started = time.monotonic()
            with pytest.raises(psycopg.errors.LockNotAvailable) as raised:
                conn.execute("CALL idgen_backfill('stuck', 'xid', 'gen_xid12()', lock_timeout => '10ms')")
            # 20 tries, each a 10 ms timeout and a 0.1 s wait.
            assert time.monotonic() - started >= 20 * 0.11 - 0.2
            assert "after 20 lock timeouts in a row" in raised.value.diag.message_primary
            assert conn.execute("SELECT count(xid) FROM stuck").fetchone()[0] == 0
        holder.execute("COMMIT")


def test_pause_between_batches(db):
    with connect(dbname=db) as conn:
        numbered_table(conn, "paused", 300)
        started = time.monotonic()
        conn.execute("CALL idgen_backfill('paused', 'xid', 'gen_xid12()', batch_size => 100, pause => '0.3 s')")
        # A pause after each of the 3 batches that filled rows.
        assert time.monotonic() - started >= 0.9
        assert conn.execute("SELECT count(DISTINCT xid) FROM paused").fetchone()[0] == 300


def test_error_then_resume(db):
    with connect(dbname=db) as conn:
        numbered_table(conn, "failing", 5000)
        # The expression fails on row 2500: the batches before it stay committed.
        with pytest.raises(psycopg.errors.DivisionByZero):
            conn.execute("""CALL idgen_backfill('failing', 'xid',
                'CASE WHEN id = 2500 THEN (1 / (id - 2500))::text::xid12 ELSE gen_xid12() END', batch_size => 1000)""")
        before = dict(conn.execute("SELECT id, xid FROM failing WHERE xid IS NOT NULL").fetchall())
        assert sorted(before) == list(range(1, 2001))
        conn.execute("CALL idgen_backfill('failing', 'xid', 'gen_xid12()', batch_size => 1000)")
        after = dict(conn.execute("SELECT id, xid FROM failing").fetchall())
        assert len(set(after.values())) == 5000 and None not in after.values()
        assert all(after[k] == v for k, v in before.items()), "a row filled before the error changed"


BAD_CALLS = [
    ("parted", "xid", "gen_xid12()", ", order_by => 'id'", "55000"),  # partitioned, no primary key
    ("no_such_table", "xid", "gen_xid12()", "", "42P01"),
    ("target_view", "xid", "gen_xid12()", "", "42809"),
    ("target", "no_such_column", "gen_xid12()", "", "42703"),
    ("target", "u", "gen_xid12()", "", "42804"),
    ("target", "n", "gen_xid12()", "", "42804"),
    ("keyless", "xid", "gen_xid12()", "", "55000"),
    ("target", "xid", "gen_xid12()", ", batch_size => 0", "22023"),
    ("target", "xid", "gen_xid12()", ", batch_size => -5", "22023"),
    ("target", "xid", "gen_xid12()", ", pause => '-1 s'", "22023"),
    ("target", "xid", "gen_xid12()", ", order_by => 'no_such_column'", "42703"),
    ("target", "xid", "gen_xid12()", ", order_by => 'xid'", "22023"),
    ("target", "xid", "gen_xid12(no_such_column)", "", "42703"),
    ("target", "xid", "no_such_function()", "", "42883"),
    ("target", "xid", "NULL::xid12", "", "22004"),
    (None, "xid", "gen_xid12()", "", "22004"),
    ("target", None, "gen_xid12()", "", "22004"),
    ("target", "xid", None, "", "22004"),
    ("target", "xid", "gen_xid12()", ", batch_size => NULL", "22023"),
    ("target", "xid", "gen_xid12()", ", lock_timeout => '-1 ms'", "22023"),
    ("target", "xid", "gen_xid12()", ", statement_timeout => NULL", "22023"),
    ("target", "xid", "gen_xid12()", ", order_by => 'j'", "42883"),  # json has no btree ordering
]


@pytest.mark.parametrize("relation,column,expression,extra,sqlstate", BAD_CALLS)
def test_bad_argument_changes_nothing(db, relation, column, expression, extra, sqlstate):
    with connect(dbname=db) as conn:
        conn.execute("""CREATE TABLE IF NOT EXISTS target (id int PRIMARY KEY, u uuid, n numeric, xid xid12,
            created_at timestamptz DEFAULT now(), j json)""")
        conn.execute("CREATE OR REPLACE VIEW target_view AS SELECT * FROM target")
        conn.execute("CREATE TABLE IF NOT EXISTS keyless (created_at timestamptz, xid xid12)")
        conn.execute("CREATE TABLE IF NOT EXISTS parted (id int, xid xid12) PARTITION BY RANGE (id)")
        conn.execute("CREATE TABLE IF NOT EXISTS parted_1 PARTITION OF parted FOR VALUES FROM (1) TO (100)")
        conn.execute("INSERT INTO parted SELECT g FROM generate_series(1, 99 - (SELECT count(*) FROM parted)) g")
        # More rows than two batches: a check made only once the run had started would leave the
        # first batch committed.
        conn.execute("INSERT INTO target (id) SELECT g FROM generate_series(1, 12000) g ON CONFLICT DO NOTHING")
        conn.execute("INSERT INTO keyless SELECT now() FROM generate_series(1, 100 - (SELECT count(*) FROM keyless))")
        data = """SELECT (SELECT md5(string_agg(t::text, ',' ORDER BY id)) FROM target t),
                         (SELECT md5(string_agg(k::text, ',')) FROM keyless k),
                         (SELECT md5(string_agg(p::text, ',' ORDER BY id)) FROM parted p)"""
        runs = "SELECT count(*) FROM idgen_backfill_progress"
        before, runs_before = conn.execute(data).fetchone(), conn.execute(runs).fetchone()
        call = f"CALL idgen_backfill(%s, %s, %s{extra})"
        with pytest.raises(psycopg.Error) as raised:
            conn.execute(call, (relation, column, expression))
        assert raised.value.sqlstate == sqlstate, raised.value
        assert conn.execute(data).fetchone() == before
        if expression != "NULL::xid12":  # found before the run starts, not by its first batch
            assert conn.execute(runs).fetchone() == runs_before


def test_unknown_column_error_quotes_a_long_name_short(db):
    with connect(dbname=db) as conn:
        conn.execute("CREATE TABLE named (id int PRIMARY KEY, xid xid12)")
        with pytest.raises(psycopg.errors.UndefinedColumn) as raised:
            conn.execute("CALL idgen_backfill('named', 'xid', 'gen_xid12()', order_by => repeat('q', 100000))")
        message = raised.value.diag.message_primary
        assert message == f'column "{"q" * 40}..." (100000 characters) of relation "public.named" does not exist', message


def test_progress_notices_while_running(db):
    with connect(dbname=db) as conn:
        numbered_table(conn, "reported", 3000)
        notices = []
        conn.add_notice_handler(lambda d: notices.append(d.message_primary))
        conn.execute("CALL idgen_backfill('reported', 'xid', 'gen_xid12()', batch_size => 1000, report_every => '0')")
    # Which walk and why, one report per batch, then the closing one.
    assert len(notices) == 5, notices
    assert notices[0] == ("idgen_backfill public.reported.xid: index walk (index reported_pkey leads with id), "
                          "3000 rows to fill"), notices[0]
    for done, notice in zip((1000, 2000, 3000), notices[1:]):
        assert re.fullmatch(rf"idgen_backfill public\.reported\.xid: {done} of 3000 rows, [0-9]+ rows/s, about "
                            r"[0-9:]+ left", notice), notice
    assert re.fullmatch(r"idgen_backfill public\.reported\.xid: 3000 of 3000 rows in [0-9.]+ s, done", notices[4])


def test_inside_a_transaction_block_changes_nothing(db):
    with connect(dbname=db) as conn:
        numbered_table(conn, "in_block", 100)
        with pytest.raises(psycopg.errors.InvalidTransactionTermination):
            with conn.transaction():
                conn.execute("CALL idgen_backfill('in_block', 'xid', 'gen_xid12()')")
        assert conn.execute("SELECT count(xid) FROM in_block").fetchone()[0] == 0


def playbook() -> str:
    text = README.read_text()
    start = text.index("<!-- playbook")
    return re.search(r"```sql\n(.*?)```", text[start:], re.S).group(1)


def test_readme_migration_playbook(db):
    with connect(dbname=db) as conn:
        conn.execute("""CREATE TABLE orders (id bigserial PRIMARY KEY,
            created_at timestamptz NOT NULL DEFAULT clock_timestamp(), amount numeric)""")
        conn.execute("""CREATE TABLE order_items (id bigserial PRIMARY KEY,
            order_id bigint NOT NULL REFERENCES orders (id), sku text)""")
        conn.execute("""INSERT INTO orders (created_at, amount)
            SELECT '2025-01-01'::timestamptz + random() * interval '365 days', g FROM generate_series(1, 20000) g""")
        conn.execute("CREATE INDEX ON orders (created_at)")
        conn.execute("""INSERT INTO order_items (order_id, sku)
            SELECT 1 + (g % 20000), 'sku' || g FROM generate_series(1, 50000) g""")
        host, port = conn.info.host, conn.info.port

    psql = Path(os.environ["PG_IDGEN_BINDIR"]) / "psql"
    subprocess.run([str(psql), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", host, "-p", str(port),
                    "-U", "postgres", "-d", db], input=playbook(), text=True, check=True, capture_output=True)

    with connect(dbname=db) as conn:
        assert conn.execute("""SELECT a.attname, a.attnotnull FROM pg_index i
            JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
            WHERE i.indrelid = 'orders'::regclass AND i.indisprimary""").fetchall() == [("xid", True)]
        assert conn.execute("SELECT count(DISTINCT xid) FROM orders").fetchone()[0] == 20000
        assert conn.execute("""SELECT count(*) FROM (SELECT created_at, lag(created_at) OVER (ORDER BY xid) AS before
            FROM orders) s WHERE created_at < before""").fetchone()[0] == 0
        assert conn.execute("""SELECT count(*) FROM order_items i JOIN orders o ON o.id = i.order_id
            WHERE i.order_xid = o.xid""").fetchone()[0] == 50000
        assert conn.execute("""SELECT convalidated FROM pg_constraint
            WHERE conname = 'order_items_order_xid_fkey'""").fetchone()[0] is True
        # New rows get an id from the default, and the new foreign key holds.
        new = conn.execute("INSERT INTO orders (amount) VALUES (1) RETURNING xid").fetchone()[0]
        conn.execute("INSERT INTO order_items (order_id, order_xid) VALUES (1, %s)", (new,))
        with pytest.raises(psycopg.errors.ForeignKeyViolation):
            conn.execute("INSERT INTO order_items (order_id, order_xid) VALUES (1, gen_xid12())")


# The walks of 0.5.0: no index on order_by (a sort into a work table), partitioned tables, and
# whole-table statements that take longer than one batch's statement_timeout.

def work_table(conn, table: str, column: str = "xid") -> str | None:
    """The work table idgen_backfill keeps for table.column while a sorted walk is under way."""
    row = conn.execute("""SELECT format('%%I.%%I', n.nspname, c.relname) FROM pg_class c
        JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relname = format('idgen_backfill_%%s_%%s', %s::regclass::oid,
              (SELECT attnum FROM pg_attribute WHERE attrelid = %s::regclass AND attname = %s))""",
                       (table, table, column)).fetchone()
    return row[0] if row else None


# A writer's statement waits at most for the batch that holds its row (one commit per batch):
# its longest wait is bounded by the longest batch, measured by the same run on the same
# machine at the same moment, plus this margin for the commit after a batch's notice and the
# notice's way to the client (on an idle machine a few milliseconds; at a load average of 11
# on 2 cores, tenths of a second). A fixed bound (it was 1 s) failed at 2.4 s under load.
WAIT_MARGIN_S = 1.0


class Batches:
    """When a run's notices arrive (report_every => '0': one per batch that filled rows, and a
    closing one), and when a cancelled run ended: the batches' durations, as the client saw
    them. A notice handler: connection.add_notice_handler(batches.notice)."""

    def __init__(self):
        self.marks: list[tuple[float, int]] = []  # (time.monotonic(), rows done)
        self.ended: float | None = None

    def notice(self, diag) -> None:
        done = re.search(r": ([0-9]+) of (?:about )?[0-9]+ rows", diag.message_primary or "")
        self.marks.append((time.monotonic(), int(done.group(1)) if done else 0))

    def end(self) -> None:
        """The run was cancelled: its last batch held its rows until now."""
        self.ended = time.monotonic()

    def longest(self) -> float:
        """The longest time between two notices over which rows were filled (a batch: locking,
        filling, committing), or between the last one and a cancel. The interval before the
        closing notice (the sweep, or the sort of rows that came in, which fill nothing and
        take no row lock) is not a batch."""
        spans = [t1 - t0 for (t0, d0), (t1, d1) in zip(self.marks, self.marks[1:]) if d1 > d0]
        if self.ended is not None and self.marks:
            spans.append(self.ended - self.marks[-1][0])
        return max(spans, default=0.0)


class RowHolder:
    """Another session holding (FOR UPDATE) the rank-th row of table in the walk's order
    (created_at, id) until the block ends: a run stops there, waiting for it (give it a long
    lock_timeout), so a cancel is sure to land in the middle of the run."""

    def __init__(self, db: str, table: str, rank: int):
        self.db, self.table, self.rank = db, table, rank

    def __enter__(self):
        self.conn = connect(dbname=self.db)
        # Found first, then locked alone: FOR UPDATE with OFFSET would lock the skipped rows too.
        self.id = self.conn.execute(f"SELECT id FROM {self.table} ORDER BY created_at, id OFFSET %s LIMIT 1",
                                    (self.rank - 1,)).fetchone()[0]
        self.conn.execute("BEGIN")
        self.conn.execute(f"SELECT 1 FROM {self.table} WHERE id = %s FOR UPDATE", (self.id,))
        return self

    def __exit__(self, *exc):
        self.conn.execute("ROLLBACK")
        self.conn.close()


class Writer:
    """A second connection that inserts a row (its id from the column's default) and updates
    an existing one, in a loop, until stopped; the server times each statement (from its
    arrival to its last row: the waits for locks, without the client's own scheduling). The
    block's body starts once the first writes are done. Append each run's Batches to runs:
    on leaving, the longest wait must be within the longest batch + WAIT_MARGIN_S."""

    def __init__(self, db: str, table: str, sample: list, pause_s: float = 0.002):
        self.db, self.table, self.sample, self.pause_s = db, table, sample, pause_s
        self.stop = threading.Event()
        self.writing = threading.Event()
        self.waits: list[float] = []
        self.inserted = 0
        self.updates: dict = {}
        self.errors: list = []
        self.runs: list[Batches] = []
        self.thread = threading.Thread(target=self.run)

    def run(self):
        timed = "RETURNING extract(epoch FROM clock_timestamp() - statement_timestamp())::float8"
        try:
            with connect(dbname=self.db) as w:
                k = 0
                while not self.stop.is_set():
                    self.waits.append(w.execute(
                        f"INSERT INTO {self.table} (created_at) VALUES (clock_timestamp()) {timed}").fetchone()[0])
                    self.inserted += 1
                    target = self.sample[k % len(self.sample)]
                    k += 1
                    self.waits.append(w.execute(
                        f"UPDATE {self.table} SET payload = payload + 1 WHERE id = %s {timed}", (target,)).fetchone()[0])
                    self.updates[target] = self.updates.get(target, 0) + 1
                    self.writing.set()
                    if self.pause_s:
                        time.sleep(self.pause_s)
        except Exception as e:  # reported by __exit__
            self.errors.append(e)
        finally:
            self.writing.set()

    def __enter__(self):
        self.thread.start()
        self.writing.wait(120)
        assert not self.errors, self.errors
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()
        if exc[0] is None:  # else the body's error is the one to see
            assert not self.errors, self.errors
            assert self.inserted > 0 and self.updates, "the writer made no writes while the backfill ran"
            longest = max((b.longest() for b in self.runs), default=0.0)
            if os.environ.get("PG_IDGEN_TIMING_LOG"):  # the figures of a run, to set the margin by
                with open(os.environ["PG_IDGEN_TIMING_LOG"], "a") as log:
                    log.write(f"{self.table}: longest write {max(self.waits):.3f} s, longest batch {longest:.3f} s, "
                              f"{len(self.waits)} writes, load {os.getloadavg()[0]:.1f}\n")
            assert max(self.waits) <= longest + WAIT_MARGIN_S, (
                f"a concurrent write waited {max(self.waits):.3f} s in the server, more than the longest batch "
                f"({longest:.3f} s) + {WAIT_MARGIN_S} s: it waited for more than the batch holding its row")


def cancel_when(db: str, table: str, call: str, rows_done: int, hold_rank: int) -> Batches:
    """Runs call in a thread and cancels it once the progress table shows rows_done rows. The
    hold_rank-th row (in the walk's order) is held meanwhile (RowHolder): the run cannot finish
    first, however slow the watcher (the call needs a long lock_timeout). Returns the run's
    Batches (notices with report_every => '0')."""
    runner_pid, failures = [], []
    batches = Batches()

    def run():
        with connect(dbname=db) as c:
            c.add_notice_handler(batches.notice)
            runner_pid.append(c.info.backend_pid)
            try:
                c.execute(call)
            except psycopg.Error as e:
                batches.end()
                failures.append(e)

    thread = threading.Thread(target=run)
    with RowHolder(db, table, hold_rank), connect(dbname=db) as watcher:
        thread.start()
        try:
            deadline = time.monotonic() + 120
            seen = None
            while time.monotonic() < deadline and thread.is_alive():
                seen = watcher.execute("""SELECT rows_done FROM idgen_backfill_progress
                    WHERE relation = %s::regclass AND finished_at IS NULL AND pid = %s""",
                                       (table, runner_pid[0] if runner_pid else 0)).fetchone()
                if seen and seen[0] >= rows_done:
                    break
                time.sleep(0.02)
            assert seen and seen[0] >= rows_done, (
                f"expected the run at {rows_done} rows or more within 120 s, saw {seen} {failures}")
        finally:
            if runner_pid:
                watcher.execute("SELECT pg_cancel_backend(%s)", (runner_pid[0],))
            thread.join()
    assert len(failures) == 1 and isinstance(failures[0], psycopg.errors.QueryCanceled), failures
    return batches


def out_of_order_but_resumed(conn, table: str) -> int:
    """out_of_order, also allowing the one second where a resumed run (another process id in
    its ids) took over."""
    return conn.execute(f"""SELECT count(*) FROM (
        SELECT created_at, xid, lag(created_at) OVER w AS before, lag(xid) OVER w AS before_xid
        FROM {table} WHERE legacy WINDOW w AS (ORDER BY xid)) s
        WHERE created_at < before
          AND NOT (xid12_time(xid) = xid12_time(before_xid)
                   AND (xid12_counter(xid) - xid12_counter(before_xid) > 8388608
                        OR xid12_pid(xid) <> xid12_pid(before_xid)))""").fetchone()[0]


def test_no_index_on_order_by_sorts_once_cancelled_and_resumed(db):
    rows = 100_000
    with connect(dbname=db) as conn:
        legacy_table(conn, "unindexed", rows, index=False)
        conn.execute("ALTER TABLE unindexed ALTER COLUMN xid SET DEFAULT gen_xid12()")
        # The writer's rows: not the one cancel_when holds (31,000th in the walk's order), which
        # it would wait for until the cancel.
        sample = [r[0] for r in conn.execute("""SELECT id FROM unindexed
            WHERE id <> (SELECT id FROM unindexed ORDER BY created_at, id OFFSET 30999 LIMIT 1)
            ORDER BY random() LIMIT 2000""")]
    call = ("CALL idgen_backfill('unindexed', 'xid', 'gen_xid12(created_at)', batch_size => 2000, "
            "order_by => 'created_at', lock_timeout => '10min', report_every => '0', pause => '20ms')")
    notices = []
    with Writer(db, "unindexed", sample) as writer:
        writer.runs.append(cancel_when(db, "unindexed", call, 30_000, hold_rank=31_000))
        resumed = Batches()
        writer.runs.append(resumed)
        with connect(dbname=db) as conn:
            # The work table outlives the cancelled session, holding the rows not filled yet.
            work = work_table(conn, "unindexed")
            assert work and work.startswith("public.idgen_backfill_"), work
            left = conn.execute(f"SELECT sum(cardinality(idgen_k1)) FROM {work}").fetchone()[0]
            before = dict(conn.execute("SELECT id, xid FROM unindexed WHERE xid IS NOT NULL AND legacy").fetchall())
            assert 30_000 <= len(before) < rows and left == rows - len(before)
            conn.add_notice_handler(lambda d: notices.append(d.message_primary))
            conn.add_notice_handler(resumed.notice)
            conn.execute(call.replace(", pause => '20ms'", ""))
    with connect(dbname=db) as conn:
        assert notices[0] == ("idgen_backfill public.unindexed.xid: sorted walk (no index leads with created_at, "
                              f"resuming the work table of an earlier run), {left} rows to fill"), notices[0]
        assert work_table(conn, "unindexed") is None, "the work table was not dropped"
        total, filled, distinct = conn.execute(
            "SELECT count(*), count(xid), count(DISTINCT xid) FROM unindexed").fetchone()
        assert total == rows + writer.inserted and filled == total and distinct == total
        after = dict(conn.execute("SELECT id, xid FROM unindexed WHERE legacy").fetchall())
        assert all(after[k] == v for k, v in before.items()), "a row filled before the cancel changed"
        assert conn.execute("""SELECT count(*) FROM unindexed
            WHERE legacy AND xid12_time(xid) <> date_trunc('second', created_at)""").fetchone()[0] == 0
        assert out_of_order_but_resumed(conn, "unindexed") == 0
        stored = dict(conn.execute("SELECT id, payload FROM unindexed WHERE payload > 0").fetchall())
        assert stored == writer.updates, "a concurrent update was lost"
        assert conn.execute("""SELECT walk, rows_done, rows_total, finished_at IS NOT NULL
            FROM idgen_backfill_progress WHERE relation = 'unindexed'::regclass""").fetchone() == (
            "sorted", left, left, True)


def sorted_batch(conn, table: str, rows: int, batch: int):
    """A table without an index on created_at, its sorted walk planned and its work table made
    (chunks of batch keys), as idgen_backfill does first. Returns the walk's statements."""
    legacy_table(conn, table, rows, index=False)
    plan = conn.execute("""SELECT work_schema, work_name, signature, probe_sql, create_sql, sort_sql,
        fill_sql, lock_sql, ordered_sql, forget_sql
        FROM idgen_backfill_work_plan(%s, 'xid', 'gen_xid12(created_at)', 'created_at', %s)""",
                        (table, batch)).fetchone()
    assert conn.execute("SELECT * FROM idgen_backfill_sort(%s, %s, %s, %s, %s, %s, true)",
                        plan[:6]).fetchone() == (rows, False)
    return dict(zip(("work", "fill", "lock", "ordered", "forget"), (list(plan[:3]),) + plan[6:]))


def filled_in_walk_order(conn, table: str) -> tuple:
    """How many rows are filled, and how many of them follow a row of later created_at in id order."""
    return conn.execute(f"""SELECT count(*), count(*) FILTER (WHERE created_at < before) FROM (
        SELECT created_at, lag(created_at) OVER (ORDER BY xid) AS before FROM {table} WHERE xid IS NOT NULL) s""").fetchone()


def test_sorted_batch_counts_rows_filled_out_of_walk_order(db):
    """A sorted walk's batch is one UPDATE whose rows must come in the walk's order; it counts
    those that do not. A hash join (which idgen_backfill_fill_range's settings rule out)
    updates them in the table's order, and the count says so."""
    with connect(dbname=db) as conn:
        statements = sorted_batch(conn, "disordered", 20_000, 3000)
        bounds = [0, 3000]
        with conn.transaction(force_rollback=True):
            conn.execute("SET LOCAL enable_nestloop = off")
            conn.execute(f"PREPARE disordered_fill(bigint[]) AS {statements['fill']}")
            filled, nulls, behind = conn.execute("EXECUTE disordered_fill('{0,3000}')").fetchone()
            assert (filled, nulls) == (3000, 0) and behind > 1000, (filled, nulls, behind)
        # Through idgen_backfill_fill_range, as a run fills it: in order, counted as such.
        conn.execute("SET enable_nestloop = off")  # the function's own settings still win
        assert conn.execute("SELECT filled, nulls FROM idgen_backfill_fill_range(%s, %s, %s, %s, %s, %s, %s)",
                            (*statements["work"], statements["fill"], statements["lock"], statements["ordered"], bounds)
                            ).fetchone() == (3000, 0)
        conn.execute("RESET enable_nestloop")
        assert filled_in_walk_order(conn, "disordered") == (3000, 0)


def test_sorted_batch_filled_out_of_order_is_filled_again_in_two_statements(db):
    """When a batch's UPDATE reports rows out of the walk's order (here a stand-in statement
    that says so), the batch is rolled back and filled by lock_sql then ordered_sql: every row
    once, in the walk's order, and the work table then forgets the batch's keys."""
    with connect(dbname=db) as conn:
        statements = sorted_batch(conn, "refilled", 10_000, 2500)
        claims_disorder = "SELECT 7::bigint, 0::bigint, 1::bigint"
        for chunk in range(4):
            assert conn.execute("SELECT filled, nulls FROM idgen_backfill_fill_range(%s, %s, %s, %s, %s, %s, %s)",
                                (*statements["work"], claims_disorder, statements["lock"], statements["ordered"],
                                 [chunk, 2500])
                                ).fetchone() == (2500, 0)
            conn.execute("SELECT idgen_backfill_forget(%s, %s, %s, %s, %s)",
                         (*statements["work"], statements["forget"], [chunk, 2500]))
        assert filled_in_walk_order(conn, "refilled") == (10_000, 0)
        assert conn.execute("SELECT count(DISTINCT xid) FROM refilled").fetchone()[0] == 10_000
        work = work_table(conn, "refilled")
        assert conn.execute(f"SELECT count(*) FROM {work}").fetchone()[0] == 0
        conn.execute(f"DROP TABLE {work}")


def test_a_smaller_batch_size_resumes_the_work_table_in_smaller_batches(db):
    """The work table keeps the keys in chunks of the batch_size that sorted them; a resumed run
    with a smaller batch_size fills part of a chunk per batch (and forgets that part)."""
    with connect(dbname=db) as conn:
        sorted_batch(conn, "rebatched", 5000, 2000)
        work = work_table(conn, "rebatched")
        assert conn.execute(f"SELECT array_agg(cardinality(idgen_k1) ORDER BY idgen_chunk) FROM {work}"
                            ).fetchone()[0] == [2000, 2000, 1000]
        conn.execute("""CALL idgen_backfill('rebatched', 'xid', 'gen_xid12(created_at)', batch_size => 300,
            order_by => 'created_at')""")
        assert conn.execute("""SELECT batches, rows_done, rows_total FROM idgen_backfill_progress
            WHERE relation = 'rebatched'::regclass""").fetchone() == (7 + 7 + 4, 5000, 5000)
        assert filled_in_walk_order(conn, "rebatched") == (5000, 0)
        assert work_table(conn, "rebatched") is None


def test_a_primary_key_that_is_an_array_is_an_error_before_any_row_changes(db):
    """The walk orders by the primary key with each key type's default btree operators (and the
    sorted walk keeps key columns as arrays); an array key has none of its own: 42883, and
    nothing filled, on a table as on a partitioned one."""
    with connect(dbname=db) as conn:
        conn.execute("CREATE TABLE array_keyed (k int[] PRIMARY KEY, made timestamptz NOT NULL, xid xid12)")
        conn.execute("""CREATE TABLE array_parted (k int[], made timestamptz NOT NULL, xid xid12, PRIMARY KEY (k, made))
            PARTITION BY RANGE (made)""")
        conn.execute("CREATE TABLE array_parted_all PARTITION OF array_parted DEFAULT")
        for table in ("array_keyed", "array_parted"):
            conn.execute(f"INSERT INTO {table} SELECT ARRAY[g, g + 1], now() FROM generate_series(1, 100) g")
            with pytest.raises(psycopg.errors.UndefinedFunction, match='in the order of column "k": type integer'):
                conn.execute(f"CALL idgen_backfill('{table}', 'xid', 'gen_xid12(made)', order_by => 'made')")
            assert conn.execute(f"SELECT count(xid) FROM {table}").fetchone()[0] == 0


def fill_counter(conn, table: str) -> None:
    """Counts, per row, the updates that change xid (a trigger on the partitioned table)."""
    conn.execute(f"CREATE TABLE {table}_fills (id uuid, n int)")
    conn.execute(f"""CREATE FUNCTION {table}_count_fill() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF OLD.xid IS DISTINCT FROM NEW.xid THEN INSERT INTO {table}_fills VALUES (NEW.id, 1); END IF;
            RETURN NEW;
        END $$""")
    conn.execute(f"""CREATE TRIGGER count_fill BEFORE UPDATE ON {table}
        FOR EACH ROW EXECUTE FUNCTION {table}_count_fill()""")


PARTITIONED = {
    # Range by created_at, with a default partition for the months no range covers.
    "by_range": ["PARTITION BY RANGE (created_at)",
                 "by_range_q1 PARTITION OF by_range FOR VALUES FROM ('2025-01-01') TO ('2025-04-01')",
                 "by_range_q2 PARTITION OF by_range FOR VALUES FROM ('2025-04-01') TO ('2025-07-01')",
                 "by_range_q4 PARTITION OF by_range FOR VALUES FROM ('2025-10-01') TO ('2026-01-01')",
                 "by_range_other PARTITION OF by_range DEFAULT"],
    # Hash by the old key.
    "by_hash": ["PARTITION BY HASH (id)"] + [
        f"by_hash_{r} PARTITION OF by_hash FOR VALUES WITH (MODULUS 4, REMAINDER {r})" for r in range(4)],
    # Two levels: halves of the year, the first hashed by the old key, the second by quarter.
    "two_level": ["PARTITION BY RANGE (created_at)",
                  "two_level_h1 PARTITION OF two_level FOR VALUES FROM ('2025-01-01') TO ('2025-07-01') "
                  "PARTITION BY HASH (id)",
                  "two_level_h1a PARTITION OF two_level_h1 FOR VALUES WITH (MODULUS 2, REMAINDER 0)",
                  "two_level_h1b PARTITION OF two_level_h1 FOR VALUES WITH (MODULUS 2, REMAINDER 1)",
                  "two_level_h2 PARTITION OF two_level FOR VALUES FROM ('2025-07-01') TO ('2026-01-01') "
                  "PARTITION BY RANGE (created_at)",
                  "two_level_q3 PARTITION OF two_level_h2 FOR VALUES FROM ('2025-07-01') TO ('2025-10-01')",
                  "two_level_q4 PARTITION OF two_level_h2 FOR VALUES FROM ('2025-10-01') TO ('2026-01-01')"],
}


@pytest.mark.parametrize("table", sorted(PARTITIONED))
def test_partitioned_table_in_one_call(db, table):
    rows = 30_000
    spec = PARTITIONED[table]
    with connect(dbname=db) as conn:
        key = "(id, created_at)" if "created_at" in spec[0] else "(id)"
        conn.execute(f"""CREATE TABLE {table} (id uuid NOT NULL DEFAULT gen_random_uuid(),
            created_at timestamptz NOT NULL, payload integer NOT NULL DEFAULT 0,
            legacy boolean NOT NULL DEFAULT true, xid xid12, PRIMARY KEY {key}) {spec[0]}""")
        for partition in spec[1:]:
            conn.execute(f"CREATE TABLE {partition}")
        conn.execute(f"""INSERT INTO {table} (created_at)
            SELECT '2025-01-01'::timestamptz + random() * interval '365 days' FROM generate_series(1, {rows})""")
        conn.execute(f"ANALYZE {table}")
        fill_counter(conn, table)
        leaves = conn.execute(f"""SELECT count(*) FROM pg_partition_tree('{table}')
            WHERE isleaf""").fetchone()[0]
        assert leaves >= 4
        # Cancelled in the middle of the run, which walks every partition in created_at order:
        # at 12,000 rows, held at the 12,500th: well inside the second quarter of the year
        # (which starts about 7,400 rows in and ends about 14,900 rows in).
        cancel_when(db, table, f"""CALL idgen_backfill('{table}', 'xid', 'gen_xid12(created_at)',
            batch_size => 1000, order_by => 'created_at', pause => '20ms', lock_timeout => '10min')""",
                    12_000, hold_rank=12_500)
        before = dict(conn.execute(f"SELECT id, xid FROM {table} WHERE xid IS NOT NULL").fetchall())
        assert 12_000 <= len(before) < rows
        # Some partitions are part filled: the cancel came in the middle of one.
        assert conn.execute(f"""SELECT count(*) FROM (SELECT tableoid FROM {table} GROUP BY tableoid
            HAVING count(xid) > 0 AND count(xid) < count(*)) s""").fetchone()[0] >= 1
        conn.execute(f"CALL idgen_backfill('{table}', 'xid', 'gen_xid12(created_at)', order_by => 'created_at')")

        after = dict(conn.execute(f"SELECT id, xid FROM {table}").fetchall())
        assert len(after) == rows and None not in after.values() and len(set(after.values())) == rows
        assert all(after[k] == v for k, v in before.items()), "a row filled before the cancel changed"
        # Every row filled exactly once.
        assert conn.execute(f"SELECT count(*), count(DISTINCT id) FROM {table}_fills").fetchone() == (rows, rows)
        assert conn.execute(f"""SELECT count(*) FROM {table}
            WHERE xid12_time(xid) <> date_trunc('second', created_at)""").fetchone()[0] == 0
        # One order across every partition: the ids follow created_at.
        assert out_of_order_but_resumed(conn, table) == 0
        assert work_table(conn, table) is None
        assert conn.execute(f"""SELECT walk, rows_done, finished_at IS NOT NULL FROM idgen_backfill_progress
            WHERE relation = '{table}'::regclass""").fetchone() == ("sorted", rows - len(before), True)


def test_whole_table_statements_outlast_the_batch_timeout(db):
    """The opening count and the closing sweep's sort read the whole table; a row-level
    security policy that sleeps a little per row makes them outlast a batch's
    statement_timeout, which each batch of 5 rows stays far under. The run completes.

    Not a race with the machine's speed: pg_sleep only ever sleeps at least as long as asked,
    so a statement reading the 600 rows takes at least 1.2 s, above the 1 s timeout however
    fast the machine; a batch sleeps 10 ms or so (5 rows, read once or twice), a hundredth of
    the timeout, which holds at a 10x slowdown with room to spare."""
    rows = 600
    with connect(dbname=db) as conn:
        conn.execute("DROP ROLE IF EXISTS backfill_slow_reader")
        conn.execute("CREATE ROLE backfill_slow_reader")
        conn.execute("""CREATE FUNCTION slow_true(id int) RETURNS boolean LANGUAGE sql VOLATILE
            AS $$ SELECT pg_sleep(0.002) IS NOT NULL $$""")
        conn.execute("CREATE TABLE slow_count (id int PRIMARY KEY, xid xid12)")
        conn.execute(f"INSERT INTO slow_count SELECT g FROM generate_series(1, {rows}) g")
        conn.execute("ALTER TABLE slow_count OWNER TO backfill_slow_reader")
        conn.execute("ALTER TABLE slow_count ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY")
        conn.execute("CREATE POLICY visible ON slow_count USING (slow_true(id))")
        try:
            conn.execute("SET ROLE backfill_slow_reader")
            conn.execute("SET statement_timeout = '1s'")
            with pytest.raises(psycopg.errors.QueryCanceled):
                conn.execute("SELECT count(*) FROM slow_count WHERE xid IS NULL")
            conn.execute("RESET statement_timeout")
            notices = []
            conn.add_notice_handler(lambda d: notices.append(d.message_primary))
            conn.execute("""CALL idgen_backfill('slow_count', 'xid', 'gen_xid12()', batch_size => 5,
                statement_timeout => '1s')""")
            conn.execute("RESET ROLE")
            assert conn.execute("SELECT count(DISTINCT xid), count(*) FROM slow_count").fetchone() == (rows, rows)
            assert notices[0].startswith("idgen_backfill public.slow_count.xid: index walk"), notices[0]
            assert notices[-1].startswith(f"idgen_backfill public.slow_count.xid: {rows} of {rows} rows in "), notices
        finally:
            conn.execute("RESET ROLE")
            conn.execute("DROP TABLE slow_count")
            conn.execute("DROP FUNCTION slow_true(int)")
            conn.execute("DROP ROLE backfill_slow_reader")


def test_a_large_table_starts_from_an_estimate(db):
    """At 10,000,000 rows or more in the statistics the opening count is an estimate, marked
    so; the statistics are made to say so here."""
    with connect(dbname=db) as conn:
        numbered_table(conn, "estimated", 3000)
        conn.execute("ANALYZE estimated")
        conn.execute("UPDATE pg_class SET reltuples = 2e7 WHERE oid = 'estimated'::regclass")
        notices = []
        conn.add_notice_handler(lambda d: notices.append(d.message_primary))
        conn.execute("CALL idgen_backfill('estimated', 'xid', 'gen_xid12()', batch_size => 1000, report_every => '0')")
        assert notices[0] == ("idgen_backfill public.estimated.xid: index walk (index estimated_pkey leads with id), "
                              "about 20000000 rows to fill (estimated from the statistics)"), notices[0]
        assert re.fullmatch(r"idgen_backfill public\.estimated\.xid: 1000 of about 20000000 rows, [0-9]+ rows/s, "
                            r"about [0-9:]+ left \(total estimated\)", notices[1]), notices[1]
        # Done, the total is what the run filled.
        assert re.fullmatch(r"idgen_backfill public\.estimated\.xid: 3000 of 3000 rows in [0-9.]+ s, done",
                            notices[-1]), notices[-1]
        assert conn.execute("""SELECT rows_done, rows_total, rows_total_estimated FROM idgen_backfill_progress
            WHERE relation = 'estimated'::regclass""").fetchone() == (3000, 3000, False)


def test_work_table_of_another_role_is_an_error(db):
    with connect(dbname=db) as conn:
        conn.execute("CREATE TABLE squatted (id int PRIMARY KEY, made timestamptz NOT NULL DEFAULT now(), xid xid12)")
        conn.execute("INSERT INTO squatted (id) SELECT g FROM generate_series(1, 100) g")
        name = conn.execute("""SELECT format('idgen_backfill_%s_%s', 'squatted'::regclass::oid,
            (SELECT attnum FROM pg_attribute WHERE attrelid = 'squatted'::regclass AND attname = 'xid'))""").fetchone()[0]
        conn.execute("DROP ROLE IF EXISTS backfill_squatter")
        conn.execute("CREATE ROLE backfill_squatter")
        conn.execute(f"CREATE TABLE {name} (idgen_seq bigint, idgen_k1 int)")
        conn.execute(f"ALTER TABLE {name} OWNER TO backfill_squatter")
        try:
            with pytest.raises(psycopg.errors.DuplicateTable):
                conn.execute("CALL idgen_backfill('squatted', 'xid', 'gen_xid12()', order_by => 'made')")
            assert conn.execute("SELECT count(xid) FROM squatted").fetchone()[0] == 0
        finally:
            conn.execute(f"DROP TABLE {name}")
            conn.execute("DROP ROLE backfill_squatter")


# Issue 33: a work table planted by the owner of the table's schema. That role can create any
# relation in its schema, and drop any, the caller's own work table too. A planted table (a
# trigger on every statement, a row-level security policy on reads) or view (its SELECT calls a
# function) with the work table's name would run the planter's code with the caller's rights:
# here that code counts itself in a sequence (which no rollback undoes), records a row, warns,
# and makes the planter a superuser if it can. idgen_backfill must never read or write it.

PLANTER, CALLER, SCHEMA = "backfill_planter", "backfill_caller", "bf_planted"


@pytest.fixture
def planter(db):
    """The schema SCHEMA, owned by the untrusted role PLANTER, where the superuser (or CALLER, a
    role with CREATE there) fills tables; PLANTER's spy(), which says whether it ever ran."""
    with connect(dbname=db) as conn:
        def drop():
            conn.execute(f"""DELETE FROM idgen_backfill_progress
                WHERE relation::oid IN (SELECT oid FROM pg_class WHERE relnamespace = '{SCHEMA}'::regnamespace)""")
            conn.execute(f"DROP SCHEMA {SCHEMA} CASCADE")
            for role in (PLANTER, CALLER):
                conn.execute(f"DROP OWNED BY {role}")
                conn.execute(f"DROP ROLE {role}")
        if conn.execute(f"SELECT FROM pg_namespace WHERE nspname = '{SCHEMA}'").fetchone():
            drop()
        for role in (PLANTER, CALLER):
            conn.execute(f"DROP ROLE IF EXISTS {role}")
            conn.execute(f"CREATE ROLE {role}")
        conn.execute(f"CREATE SCHEMA {SCHEMA} AUTHORIZATION {PLANTER}")
        conn.execute(f"GRANT USAGE, CREATE ON SCHEMA {SCHEMA} TO {CALLER}")
        # Both create tables with an xid12 column (the caller its own, the planter its
        # replacement of one): the owner grants them USAGE on the type, as README's Permissions
        # has it. DROP OWNED BY takes it back.
        conn.execute(f"GRANT USAGE ON TYPE xid12 TO {PLANTER}, {CALLER}")
        conn.execute(f"SET ROLE {PLANTER}")
        conn.execute(f"CREATE SEQUENCE {SCHEMA}.ran")
        conn.execute(f"CREATE TABLE {SCHEMA}.seen (what text, run_as name)")
        conn.execute(f"""CREATE FUNCTION {SCHEMA}.spy(what text) RETURNS boolean LANGUAGE plpgsql AS $$
            BEGIN
                PERFORM nextval('{SCHEMA}.ran');
                INSERT INTO {SCHEMA}.seen VALUES (what, current_user);
                RAISE WARNING 'planted code ran (%) as %', what, current_user;
                BEGIN
                    EXECUTE 'ALTER ROLE {PLANTER} SUPERUSER';
                EXCEPTION WHEN insufficient_privilege THEN NULL;
                END;
                RETURN true;
            END $$""")
        conn.execute(f"""CREATE FUNCTION {SCHEMA}.spy_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN PERFORM {SCHEMA}.spy(TG_OP); RETURN NULL; END $$""")
        conn.execute(f"GRANT USAGE ON SEQUENCE {SCHEMA}.ran TO PUBLIC")
        conn.execute(f"GRANT INSERT ON {SCHEMA}.seen TO PUBLIC")
        conn.execute("RESET ROLE")
        yield conn
        conn.execute("RESET ROLE")
        drop()


def planted_ran(conn) -> tuple:
    """What the planter's code did: (times it ran, rows it recorded, planter is superuser)."""
    return conn.execute(f"""SELECT (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM {SCHEMA}.ran),
        (SELECT count(*) FROM {SCHEMA}.seen), (SELECT rolsuper FROM pg_roles WHERE rolname = '{PLANTER}')""").fetchone()


def planted_table(conn, name: str, partitioned: bool = False) -> str:
    """A table in SCHEMA owned by the caller: id 1..3000 in created_at order, an xid12 to
    fill, no index on created_at. Returns the name of its work table."""
    table = f"{SCHEMA}.{name}"
    conn.execute(f"""CREATE TABLE {table} (id int PRIMARY KEY, created_at timestamptz NOT NULL, xid xid12)
        {"PARTITION BY RANGE (id)" if partitioned else ""}""")
    if partitioned:
        conn.execute(f"CREATE TABLE {table}_a PARTITION OF {table} FOR VALUES FROM (MINVALUE) TO (1500)")
        conn.execute(f"CREATE TABLE {table}_b PARTITION OF {table} FOR VALUES FROM (1500) TO (MAXVALUE)")
    conn.execute(f"""INSERT INTO {table}
        SELECT g, '2025-01-01'::timestamptz + g * interval '1 minute' FROM generate_series(1, 3000) g""")
    return conn.execute(f"""SELECT format('idgen_backfill_%s_%s', '{table}'::regclass::oid,
        (SELECT attnum FROM pg_attribute WHERE attrelid = '{table}'::regclass AND attname = 'xid'))""").fetchone()[0]


def plant(work: str, kind: str, drop: bool = False) -> str:
    """The planter's statements, as one transaction: (the caller's work table dropped, when drop)
    a relation named like the work table, with a chunk of keys that reads as the next batch."""
    qualified = f"{SCHEMA}.{work}"
    statements = [f"DROP TABLE IF EXISTS {qualified}"] if drop else []
    if kind == "table":
        statements += [
            f"CREATE TABLE {qualified} (idgen_chunk bigint PRIMARY KEY, idgen_k1 int[] NOT NULL)",
            f"INSERT INTO {qualified} VALUES (0, ARRAY[2999, 3000])",
            f"""CREATE TRIGGER spy BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON {qualified}
                FOR EACH STATEMENT EXECUTE FUNCTION {SCHEMA}.spy_trigger()""",
            f"ALTER TABLE {qualified} ENABLE ROW LEVEL SECURITY",
            f"CREATE POLICY spy ON {qualified} USING ({SCHEMA}.spy('read'))"]
    else:
        statements += [f"""CREATE VIEW {qualified} AS SELECT 0::bigint AS idgen_chunk, ARRAY[2999, 3000] AS idgen_k1
            WHERE {SCHEMA}.spy('view')"""]
    statements.append(f"GRANT ALL ON {qualified} TO PUBLIC")
    return f"SET ROLE {PLANTER}; BEGIN; {'; '.join(statements)}; COMMIT; RESET ROLE"


def assert_refused(error, notices: list, conn, work: str, kind: str, swapped: bool = False) -> None:
    """The planted code never ran and the planted relation was not written; the run failed with
    42P07 naming it and why."""
    assert planted_ran(conn) == (0, 0, False), "the planted code ran: (times, rows recorded, planter superuser)"
    assert not [n for n in notices if "planted code ran" in n], notices
    if kind == "table":  # and its row is as planted
        assert conn.execute(f"SELECT idgen_chunk, idgen_k1 FROM {SCHEMA}.{work}").fetchall() == [(0, [2999, 3000])]
    assert isinstance(error, psycopg.errors.DuplicateTable), error
    assert f'relation "{SCHEMA}.{work}" exists' in error.diag.message_primary, error.diag.message_primary
    # Or, when the run looked the name up as the planter swapped the tables: replaced meanwhile.
    assert (f"owned by role {PLANTER}" if kind == "table" else "It is a view") in error.diag.message_detail \
        or (swapped and "while it was being checked" in error.diag.message_detail), error.diag.message_detail


def call_planted(db: str, call: str, role: str | None = None, during=None) -> tuple:
    """Runs call (as role, when given) and returns its error and its notices. With during, a
    function of no argument: the row id 3000 (the last batch's) is held, and once the run waits
    for it, during() starts; it may wait for the run's locks. Then the row is let go."""
    error, notices, pid = [], [], []

    def run():
        with connect(dbname=db) as c:
            c.add_notice_handler(lambda d: notices.append(d.message_primary))
            pid.append(c.info.backend_pid)
            if role:
                c.execute(f"SET ROLE {role}")
            try:
                c.execute(call)
            except psycopg.Error as e:
                error.append(e)

    if during is None:
        run()
        return (error or [None])[0], notices
    table = re.search(r"CALL idgen_backfill\('([^']+)'", call).group(1)
    with connect(dbname=db) as holder, connect(dbname=db) as watcher:
        holder.execute("BEGIN")
        holder.execute(f"SELECT FROM {table} WHERE id = 3000 FOR UPDATE")
        runner = threading.Thread(target=run)
        runner.start()
        deadline = time.monotonic() + 120
        while not (pid and watcher.execute("SELECT wait_event_type = 'Lock' FROM pg_stat_activity WHERE pid = %s",
                                           pid).fetchone()[0]):
            assert runner.is_alive() and time.monotonic() < deadline, f"the run did not reach row 3000: {error}"
            time.sleep(0.02)
        planting = threading.Thread(target=during)
        planting.start()
        planting.join(2)  # done, or waiting for the lock the run's batch holds
        holder.execute("ROLLBACK")
    planting.join()
    runner.join()
    return (error or [None])[0], notices


@pytest.mark.parametrize("kind", ["table", "view"])
@pytest.mark.parametrize("role", [None, CALLER], ids=["superuser", "schema_creator"])
def test_planted_before_an_index_walk(db, planter, kind, role):
    """Planted before the run: refused before the first batch, nothing filled."""
    conn = planter
    if role:
        conn.execute(f"SET ROLE {role}")
    work = planted_table(conn, "indexed")
    conn.execute("RESET ROLE")
    conn.execute(plant(work, kind))
    error, notices = call_planted(db, f"CALL idgen_backfill('{SCHEMA}.indexed', 'xid', 'gen_xid12(created_at)', "
                                      "batch_size => 500)", role=role)
    assert_refused(error, notices, conn, work, kind)
    assert conn.execute(f"SELECT count(xid) FROM {SCHEMA}.indexed").fetchone()[0] == 0


@pytest.mark.parametrize("kind", ["table", "view"])
@pytest.mark.parametrize("walk", ["index", "sorted", "partitioned"])
def test_planted_during_the_run(db, planter, kind, walk):
    """Planted while the run is under way (the caller's own work table dropped first, for the
    walks that have one), just before its last batch: an index walk's closing sweep, or a sorted
    walk's next batch, is refused."""
    conn = planter
    work = planted_table(conn, "walked", partitioned=walk == "partitioned")
    order = "" if walk == "index" else ", order_by => 'created_at'"

    def swap():
        with connect(dbname=db) as c:
            c.execute(plant(work, kind, drop=walk != "index"))
    error, notices = call_planted(db, f"""CALL idgen_backfill('{SCHEMA}.walked', 'xid', 'gen_xid12(created_at)',
        batch_size => 500, lock_timeout => '10min'{order})""", during=swap)
    assert notices and notices[0].startswith(f"idgen_backfill {SCHEMA}.walked.xid: "
                                             f"{'index' if walk == 'index' else 'sorted'} walk"), notices
    assert_refused(error, notices, conn, work, kind, swapped=walk != "index")
    # Every batch before it filled its rows (the last one had checked and locked the work table
    # before the planter could drop it), once each, in the walk's order.
    assert filled_in_walk_order(conn, f"{SCHEMA}.walked") == (3000, 0)
    assert conn.execute(f"SELECT count(DISTINCT xid) FROM {SCHEMA}.walked").fetchone()[0] == 3000


@pytest.mark.parametrize("kind", ["table", "view"])
def test_planted_before_a_resumed_run(db, planter, kind):
    """A sorted walk cancelled in the middle leaves the caller's work table; the planter drops it
    and plants its own; the resumed run is refused, the rows filled before the cancel unchanged."""
    conn = planter
    work = planted_table(conn, "resumed")
    call = (f"CALL idgen_backfill('{SCHEMA}.resumed', 'xid', 'gen_xid12(created_at)', batch_size => 500, "
            "order_by => 'created_at', lock_timeout => '10min')")
    cancel_when(db, f"{SCHEMA}.resumed", call, 1000, hold_rank=1600)
    assert conn.execute(f"""SELECT relowner = (SELECT oid FROM pg_roles WHERE rolname = current_user)
        FROM pg_class WHERE relname = '{work}'""").fetchone() == (True,), "the cancelled run left no work table"
    before = conn.execute(f"SELECT id, xid FROM {SCHEMA}.resumed WHERE xid IS NOT NULL ORDER BY id").fetchall()
    assert 1000 <= len(before) < 3000
    conn.execute(plant(work, kind, drop=True))
    error, notices = call_planted(db, call)
    assert_refused(error, notices, conn, work, kind)
    assert conn.execute(f"SELECT id, xid FROM {SCHEMA}.resumed WHERE xid IS NOT NULL ORDER BY id").fetchall() == before


@pytest.mark.parametrize("walk", ["index", "sorted"])
def test_table_replaced_during_the_run(db, planter, walk):
    """The batches name the table they fill: the schema's owner drops it just before the last
    batch and makes a table of that name, with a row to fill and a trigger. The run stops
    (42P01) before any statement reads or writes it; the batches before it were filled."""
    conn = planter
    planted_table(conn, "replaced")
    order = "" if walk == "index" else ", order_by => 'created_at'"
    replaced = f"{SCHEMA}.replaced"

    def replace():
        with connect(dbname=db) as c:
            c.execute(f"""SET ROLE {PLANTER}; BEGIN; DROP TABLE {replaced};
                CREATE TABLE {replaced} (id int PRIMARY KEY, created_at timestamptz NOT NULL, xid xid12);
                INSERT INTO {replaced} VALUES (3001, '2030-01-01', NULL);
                CREATE TRIGGER spy BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON {replaced}
                    FOR EACH STATEMENT EXECUTE FUNCTION {SCHEMA}.spy_trigger();
                GRANT ALL ON {replaced} TO PUBLIC; COMMIT; RESET ROLE""")
    error, notices = call_planted(db, f"""CALL idgen_backfill('{replaced}', 'xid', 'gen_xid12(created_at)',
        batch_size => 500, lock_timeout => '10min'{order})""", during=replace)
    assert planted_ran(conn) == (0, 0, False), "the planted code ran: (times, rows recorded, planter superuser)"
    assert not [n for n in notices if "planted code ran" in n], notices
    assert conn.execute(f"SELECT id, xid FROM {replaced}").fetchall() == [(3001, None)]
    assert isinstance(error, psycopg.errors.UndefinedTable), error
    assert error.diag.message_primary == f'relation "{replaced}" was dropped while idgen_backfill filled it'
    assert error.diag.message_detail == "Another relation of that name was made since; it was not read or written."
