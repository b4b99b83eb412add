"""rapkey from a real driver: binary mode, and per-prefix numbers under concurrency."""
import psycopg
import pytest

from conftest import connect, run_concurrently


def test_binary_mode_round_trip(database):
    with connect(dbname=database) as conn:
        conn.execute("DROP TABLE IF EXISTS rk")
        conn.execute("CREATE TABLE rk (k rapkey PRIMARY KEY)")
        cur = conn.cursor(binary=True)
        cur.execute("INSERT INTO rk VALUES (%b) RETURNING k", ["ord.cn.sh.202407.8842-2"])
        assert cur.fetchone()[0] == "ord.cn.sh.202407.8842-2"
        with pytest.raises(psycopg.errors.CheckViolation) as err:
            cur.execute("INSERT INTO rk VALUES (%b)", ["ord.cn.sh.202407.8842-3"])
        assert "expected '2', found '3'" in err.value.diag.message_detail
        with conn.cursor(binary=True).copy("COPY rk TO STDOUT (FORMAT binary)") as copy:
            data = b"".join(bytes(c) for c in copy)
        conn.execute("TRUNCATE rk")
        with conn.cursor().copy("COPY rk FROM STDIN (FORMAT binary)") as copy:
            copy.write(data)
        assert conn.execute("SELECT k FROM rk").fetchone()[0] == "ord.cn.sh.202407.8842-2"


def test_eight_connections_take_contiguous_numbers(database):
    connections, per_connection = 8, 10_000
    prefix = "ord.cn.sh.202407"
    with connect(dbname=database) as conn:
        conn.execute("DELETE FROM rapkey_counter WHERE prefix = %s", [prefix])
        conn.execute("DROP TABLE IF EXISTS taken")
        conn.execute("CREATE TABLE taken (k rapkey)")
    with connect(dbname=database) as conn:
        conn_info = conn.info.dsn

    def worker(_k: int) -> None:
        with psycopg.connect(conn_info, autocommit=False) as conn:
            for i in range(per_connection):
                conn.execute("INSERT INTO taken SELECT rapkey_next(%s)", [prefix])
                if i % 7 == 3:
                    conn.rollback()  # a number taken and given back leaves no gap
                else:
                    conn.commit()

    run_concurrently(connections, worker)
    with connect(dbname=database) as conn:
        committed = conn.execute("SELECT count(*) FROM taken").fetchone()[0]
        numbers = conn.execute(
            "SELECT count(DISTINCT n), min(n), max(n) FROM "
            "(SELECT rapkey_segment(k, 4)::bigint AS n FROM taken) s"
        ).fetchone()
        expected = connections * sum(1 for i in range(per_connection) if i % 7 != 3)
        assert committed == expected
        assert numbers == (expected, 1, expected)
        assert conn.execute("SELECT bool_and(rapkey_is_valid(k)) FROM taken").fetchone()[0]
        last = conn.execute("SELECT last_value FROM rapkey_counter WHERE prefix = %s", [prefix]).fetchone()[0]
        assert last == expected
