"""rapkey from a real driver: binary mode, and per-prefix numbers under concurrency."""
import os

import psycopg
import pytest

from servers import connect, fresh_database, run_concurrently

# Transactions per connection in the contention test (scripts/test.sh: 2,500 on the versions
# before 18, see conftest.py).
PER_CONNECTION = int(os.environ.get("PG_IDGEN_RAPKEY_PER_CONNECTION", "10000"))


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
    connections, per_connection = 8, PER_CONNECTION
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


def test_domain_violation_names_constraint_type_and_schema():
    """Drivers and ORMs tell which constraint failed from the error's fields: a rapkey violation
    carries those of a PostgreSQL domain error, naming the extension's own schema."""
    name = fresh_database("rapkey_error_fields")
    try:
        with connect(dbname=name) as conn:
            conn.execute("CREATE SCHEMA keys")
            conn.execute("CREATE EXTENSION pg_idgen SCHEMA keys")
            conn.execute("CREATE TABLE orders (k keys.rapkey)")
            conn.execute("INSERT INTO orders VALUES ('ord.cn.sh.202407.8842-2')")
            conn.execute("CREATE DOMAIN positive AS int CONSTRAINT positive_check CHECK (VALUE > 0)")

            def error_of(statement, *args):
                with pytest.raises(psycopg.Error) as err:
                    conn.execute(statement, args)
                return err.value

            builtin = error_of("SELECT 0::positive")
            assert (builtin.sqlstate, builtin.diag.constraint_name, builtin.diag.datatype_name,
                    builtin.diag.schema_name) == ("23514", "positive_check", "positive", "public")

            wrong = "ord.cn.sh.202407.8842-3"
            for statement in ["INSERT INTO orders VALUES (%s)", "UPDATE orders SET k = %s",
                              "SELECT %s::keys.rapkey", "SELECT keys.rapkey_type(%s)"]:
                e = error_of(statement, wrong)
                assert isinstance(e, psycopg.errors.CheckViolation), statement
                assert e.sqlstate == "23514"
                assert (e.diag.constraint_name, e.diag.datatype_name, e.diag.schema_name) == (
                    "rapkey_check", "rapkey", "keys"), statement
                assert e.diag.table_name is None and e.diag.column_name is None, statement
                assert e.diag.message_primary == 'value for domain rapkey violates check constraint "rapkey_check"'
                assert e.diag.message_detail == f"\"{wrong}\": Wrong check character: expected '2', found '3'."
                assert e.diag.message_hint is None

            e = error_of("SELECT %s::keys.rapkey", "ord")
            assert (e.sqlstate, e.diag.constraint_name) == ("23514", "rapkey_check")
            assert e.diag.message_detail == "\"ord\": Missing '-' before the check character."
            assert e.diag.message_hint.startswith("A rapkey is type.segment")

            # The builders say what is wrong with their arguments, not a domain violation.
            e = error_of("SELECT keys.to_rapkey(%s)", wrong)
            assert (e.sqlstate, e.diag.constraint_name) == ("22P02", None)
            e = error_of("SELECT keys.rapkey_build('ord', 'cn', %s)", "sh!")
            assert (e.sqlstate, e.diag.constraint_name) == ("22023", None)
    finally:
        with connect() as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name}")
