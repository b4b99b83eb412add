"""xid12 seen from a real driver: binary protocol, COPY, concurrency, dump/restore."""
import os
import subprocess

import psycopg
import pytest
from psycopg.adapt import Dumper

from servers import connect, dsn, run_concurrently

# Ids per connection in the test of eight connections at once (scripts/test.sh: 50,000 on the
# versions before 18, see conftest.py).
PER_CONNECTION = int(os.environ.get("PG_IDGEN_XID12_PER_CONNECTION", "200000"))


class Xid12Bytes(bytes):
    """Raw bytes that psycopg sends in binary format as an xid12 parameter."""


def register_xid12(conn: psycopg.Connection) -> None:
    oid = conn.execute("SELECT 'xid12'::regtype::oid").fetchone()[0]

    class Xid12BinaryDumper(Dumper):
        format = psycopg.pq.Format.BINARY

        def dump(self, obj):
            return bytes(obj)

    Xid12BinaryDumper.oid = oid
    conn.adapters.register_dumper(Xid12Bytes, Xid12BinaryDumper)


EXAMPLE_TEXT = "9m4e2mr0ui3e8a215n4g"
EXAMPLE_BYTES = bytes.fromhex("4d88e15b60f486e428412dc9")


def test_binary_results_are_the_12_bytes(database):
    with connect(dbname=database) as conn:
        cur = conn.cursor(binary=True)
        cur.execute("SELECT %s::xid12", [EXAMPLE_TEXT])
        assert cur.fetchone()[0] == EXAMPLE_BYTES


def test_binary_parameters_round_trip(database):
    with connect(dbname=database) as conn:
        register_xid12(conn)
        row = conn.execute("SELECT %b::text, %b = %s::xid12", [Xid12Bytes(EXAMPLE_BYTES)] * 2 + [EXAMPLE_TEXT]).fetchone()
        assert row == (EXAMPLE_TEXT, True)
        cur = conn.cursor(binary=True)
        cur.execute("SELECT %b", [Xid12Bytes(EXAMPLE_BYTES)])
        assert cur.fetchone()[0] == EXAMPLE_BYTES


@pytest.mark.parametrize("length", [0, 11, 13, 24])
def test_binary_parameter_of_wrong_length_is_rejected(database, length):
    with connect(dbname=database) as conn:
        register_xid12(conn)
        with pytest.raises(psycopg.errors.InvalidBinaryRepresentation) as err:
            conn.execute("SELECT %b", [Xid12Bytes(b"\x01" * length)])
        assert err.value.sqlstate == "22P03"
        assert f"got {length}" in err.value.diag.message_detail
        # The backend survived.
        assert conn.execute("SELECT 1").fetchone()[0] == 1


def test_text_parameters_and_errors(database):
    with connect(dbname=database) as conn:
        assert conn.execute("SELECT %s::xid12::bytea", [EXAMPLE_TEXT.upper()]).fetchone()[0] == EXAMPLE_BYTES
        with pytest.raises(psycopg.errors.InvalidTextRepresentation):
            conn.execute("SELECT %s::xid12", ["9m4e2mr0ui3e8a215n4h"])


def test_copy_binary_round_trip(database):
    with connect(dbname=database) as conn:
        conn.execute("DROP TABLE IF EXISTS copy_src, copy_dst")
        conn.execute("CREATE TABLE copy_src (id xid12 PRIMARY KEY, ids xid12[], note text)")
        conn.execute("CREATE TABLE copy_dst (LIKE copy_src)")
        conn.execute(
            "INSERT INTO copy_src SELECT gen_xid12(), ARRAY[gen_xid12(), gen_xid12()], g::text "
            "FROM generate_series(1, 5000) g"
        )
        with conn.cursor().copy("COPY copy_src TO STDOUT (FORMAT binary)") as copy:
            data = b"".join(bytes(chunk) for chunk in copy)
        with conn.cursor().copy("COPY copy_dst FROM STDIN (FORMAT binary)") as copy:
            copy.write(data)
        differences = conn.execute(
            "SELECT count(*) FROM ((TABLE copy_src EXCEPT TABLE copy_dst) UNION ALL "
            "(TABLE copy_dst EXCEPT TABLE copy_src)) d"
        ).fetchone()[0]
        assert differences == 0
        assert conn.execute("SELECT count(*) FROM copy_dst").fetchone()[0] == 5000


def insert_concurrently(kind: str, dbname: str, connections: int, per_connection: int, batch: int) -> None:
    def worker(k: int) -> None:
        with connect(kind, dbname) as conn:
            for start in range(0, per_connection, batch):
                conn.execute(
                    "INSERT INTO gen_ids (conn, seq, id) "
                    "SELECT %s, g, gen_xid12() FROM generate_series(%s::int, %s::int) g",
                    [k, start + 1, min(start + batch, per_connection)],
                )

    run_concurrently(connections, worker)


def check_generated(conn, total: int) -> None:
    count, distinct = conn.execute("SELECT count(*), count(DISTINCT id) FROM gen_ids").fetchone()
    assert (count, distinct) == (total, total)
    not_increasing = conn.execute(
        "SELECT count(*) FROM (SELECT id, lag(id) OVER (PARTITION BY conn ORDER BY seq) AS prev "
        "FROM gen_ids) s WHERE id <= prev"
    ).fetchone()[0]
    assert not_increasing == 0


def test_eight_connections_at_once_preloaded(database):
    with connect(dbname=database) as conn:
        conn.execute("DROP TABLE IF EXISTS gen_ids")
        conn.execute("CREATE TABLE gen_ids (conn int, seq int, id xid12 PRIMARY KEY)")
    insert_concurrently("preloaded", database, connections=8, per_connection=PER_CONNECTION, batch=20_000)
    with connect(dbname=database) as conn:
        check_generated(conn, 8 * PER_CONNECTION)
        # One cluster-wide counter: no two ids of a second share a counter value.
        shared = conn.execute(
            "SELECT count(*) = count(DISTINCT (xid12_time(id), xid12_counter(id))) FROM gen_ids"
        ).fetchone()[0]
        assert shared
        pids = conn.execute("SELECT count(DISTINCT xid12_pid(id)) FROM gen_ids").fetchone()[0]
        assert pids == 8


def test_concurrent_generation_without_preload():
    name = "client_tests_plain"
    with connect("plain") as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name}")
        admin.execute(f"CREATE DATABASE {name}")
    with connect("plain", name) as conn:
        conn.execute("CREATE EXTENSION pg_idgen")
        conn.execute("CREATE TABLE gen_ids (conn int, seq int, id xid12 PRIMARY KEY)")
    insert_concurrently("plain", name, connections=4, per_connection=50_000, batch=10_000)
    with connect("plain", name) as conn:
        check_generated(conn, 4 * 50_000)


def test_dump_and_restore(tmp_path):
    """A whole database with xid12 and rapkey columns and rapkey counters survives pg_dump."""
    with connect() as admin:
        for name in ("dump_source", "restored"):
            admin.execute(f"DROP DATABASE IF EXISTS {name}")
        admin.execute("CREATE DATABASE dump_source")
        admin.execute("CREATE DATABASE restored")
    with connect(dbname="dump_source") as conn:
        conn.execute("CREATE EXTENSION pg_idgen")
        conn.execute("CREATE TABLE dumped (id xid12 PRIMARY KEY DEFAULT gen_xid12(), k rapkey UNIQUE, n int)")
        conn.execute("CREATE INDEX dumped_brin ON dumped USING brin (id)")
        conn.execute("INSERT INTO dumped (k, n) SELECT rapkey_next('ord.cn.sh'), g FROM generate_series(1, 1000) g")
        before = conn.execute("SELECT string_agg(id::text || ':' || k || ':' || n, ',' ORDER BY id) FROM dumped").fetchone()[0]
    bindir = os.environ["PG_IDGEN_BINDIR"]
    dump = tmp_path / "dump.custom"
    subprocess.run([f"{bindir}/pg_dump", "-Fc", "-f", str(dump), dsn(dbname="dump_source")], check=True)
    subprocess.run([f"{bindir}/pg_restore", "--exit-on-error", "-d", dsn(dbname="restored"), str(dump)], check=True)
    with connect(dbname="restored") as conn:
        after = conn.execute("SELECT string_agg(id::text || ':' || k || ':' || n, ',' ORDER BY id) FROM dumped").fetchone()[0]
        assert after == before
        # The default still generates, above the restored ids.
        conn.execute("INSERT INTO dumped (n) VALUES (0)")
        assert conn.execute("SELECT n FROM dumped ORDER BY id DESC LIMIT 1").fetchone()[0] == 0
        # The per-prefix counter came along: numbering continues after 1000.
        assert conn.execute("SELECT rapkey_next('ord.cn.sh')").fetchone()[0].startswith("ord.cn.sh.1001-")
