"""The extension in a schema whose name needs quoting: the SQL the registry builds names the
schema quoted once (before the fix, "Id Gen" became the unknown schema '"Id Gen"')."""
from servers import connect, fresh_database

SCHEMA = '"Id Gen"'


def test_registry_in_a_schema_that_needs_quoting():
    name = fresh_database("quoted_schema")
    with connect(dbname=name) as conn:
        conn.execute(f"CREATE SCHEMA {SCHEMA}")
        conn.execute(f"CREATE EXTENSION pg_idgen SCHEMA {SCHEMA}")
        conn.execute("DROP ROLE IF EXISTS quoted_schema_writer")
        conn.execute("CREATE ROLE quoted_schema_writer")
        try:
            acquire = f"{SCHEMA}.idgen_acquire(text, text, interval, text)"

            def may_acquire():
                return conn.execute(
                    "SELECT has_function_privilege('quoted_schema_writer', %s, 'EXECUTE')", [acquire]
                ).fetchone()[0]

            assert not may_acquire()
            conn.execute(f"SELECT {SCHEMA}.idgen_pool_allow('app', 'quoted_schema_writer')")
            assert may_acquire()
            conn.execute(f"SELECT {SCHEMA}.idgen_pool_disallow('app', 'quoted_schema_writer')")
            assert not may_acquire()

            conn.execute(f"CREATE TABLE t (x {SCHEMA}.xid12, s bigint)")
            conn.execute(
                f"INSERT INTO t VALUES ({SCHEMA}.xid12_from_parts('2024-01-01 00:00:00+00', '\\x0a0b0c', 7, 9), "
                "(1 << 22) | (5 << 12))"
            )
            for column, what in (("x", "machine"), ("s", "worker")):
                rows = conn.execute(f"SELECT * FROM {SCHEMA}.idgen_verify('t', %s)", [column]).fetchall()
                assert len(rows) == 1, (column, rows)
                assert f"{what} " in rows[0][1] and "no grant or reservation covers it" in rows[0][1], rows
        finally:
            conn.execute("DROP EXTENSION pg_idgen CASCADE")
            conn.execute("DROP ROLE quoted_schema_writer")

