"""The rapkey domain in psycopg 3 after pg_idgen.psycopg.register: COPY's set_types takes
"rapkey" and "rapkey[]" (text and binary, both ways; a key's bytes are text's), also with the
extension outside the search_path and on an async connection."""
import asyncio

import psycopg
import pytest

import pg_idgen.psycopg
from pg_idgen import XidGenerator, rapkey

from servers import connect, dsn, fresh_database

TYPES = ["xid12", "rapkey", "rapkey[]", "int8"]


@pytest.fixture(scope="module")
def db():
    return fresh_database("pyclient_rapkey", extension=True)


def rows(n=50):
    gen = XidGenerator(0x0A0B0C)
    return [(gen.new(), rapkey.build("ord", "cn", str(i)), [rapkey.build("sku", str(i), "a"), None], i)
            for i in range(n)]


def test_set_types_names_rapkey_in_copy_both_ways(db):
    data = rows()
    with connect(dbname=db) as conn:
        # Without registration psycopg knows no rapkey (the KeyError users saw).
        with pytest.raises(KeyError), conn.cursor().copy("COPY (SELECT 1) TO STDOUT") as copy:
            copy.set_types(["rapkey"])
        query = "SELECT 'ord.cn.0-w'::rapkey, ARRAY['ord.cn.0-w', NULL]::rapkey[]"
        assert conn.execute(query).fetchone() == ("ord.cn.0-w", "{ord.cn.0-w,NULL}")
        pg_idgen.psycopg.register(conn)
        for binary in (False, True):  # a rapkey[] result is a list once registered
            assert conn.cursor(binary=binary).execute(query).fetchone() == ("ord.cn.0-w", ["ord.cn.0-w", None])
        conn.execute("CREATE TABLE k_rap (id xid12, k rapkey, ks rapkey[], n int8)")
        conn.execute("CREATE TABLE k_txt (id xid12, k text, ks text[], n int8)")
        for fmt in ("text", "binary"):
            raw = {}
            for table, types in (("k_rap", TYPES), ("k_txt", ["xid12", "text", "text[]", "int8"])):
                conn.execute(f"TRUNCATE {table}")
                with conn.cursor().copy(f"COPY {table} FROM STDIN (FORMAT {fmt})") as copy:
                    copy.set_types(types)
                    for r in data:
                        copy.write_row(r)
                # (A binary array names its element type: rapkey[]'s bytes are not text[]'s.)
                with conn.cursor().copy(f"COPY {table} (id, k, n) TO STDOUT (FORMAT {fmt})") as copy:
                    raw[table] = b"".join(bytes(b) for b in copy)
                with conn.cursor().copy(f"COPY (SELECT * FROM {table} ORDER BY n) TO STDOUT (FORMAT {fmt})") as copy:
                    copy.set_types(types)
                    assert list(copy.rows()) == data, (fmt, table)
            assert raw["k_rap"] == raw["k_txt"], fmt
            assert conn.execute("SELECT count(*) FROM k_rap r JOIN k_txt t USING (id, k, n)").fetchone()[0] == len(data)
        # The server checks what COPY writes: its message, not the client's.
        for fmt in ("text", "binary"):
            with pytest.raises(psycopg.errors.CheckViolation, match="Wrong check character: expected 'w', found 'x'"):
                with conn.cursor().copy(f"COPY k_rap (k) FROM STDIN (FORMAT {fmt})") as copy:
                    copy.set_types(["rapkey"])
                    copy.write_row(["ord.cn.0-x"])


def test_outside_search_path_and_async(db):
    name = fresh_database("pyclient_rapkey_schema")
    with connect(dbname=name) as conn:
        conn.execute("CREATE SCHEMA ids")
        conn.execute("CREATE EXTENSION pg_idgen SCHEMA ids")
        conn.execute("CREATE TABLE t (k ids.rapkey)")
        pg_idgen.psycopg.register(conn)
        with conn.cursor().copy("COPY t FROM STDIN (FORMAT binary)") as copy:
            copy.set_types(["rapkey"])
            copy.write_row(["ord.cn.0-w"])
        assert conn.execute("SELECT k FROM t").fetchone()[0] == "ord.cn.0-w"

    async def run():
        async with await psycopg.AsyncConnection.connect(dsn(dbname=db), autocommit=True) as aconn:
            await pg_idgen.psycopg.register(aconn)
            cur = aconn.cursor()
            async with cur.copy("COPY (SELECT 'ord.cn.0-w'::rapkey, ARRAY['ord.cn.0-w']::rapkey[]) "
                                "TO STDOUT (FORMAT binary)") as copy:
                copy.set_types(["rapkey", "rapkey[]"])
                return [r async for r in copy.rows()]

    assert asyncio.run(run()) == [("ord.cn.0-w", ["ord.cn.0-w"])]
