"""The server's part of the cross-client interop check (tests/interop/run.sh): reads every
DIR/*.ids as the clients do and writes DIR/server.read, the same lines computed by pg_idgen's
SQL functions (xid12_time, xid12_machine, xid12_pid, xid12_counter; snowflake_time,
snowflake_worker, snowflake_sequence) and its ORDER BY, in a database made for it.

  server.py DIR DSN      DSN: a superuser's connection to a cluster with pg_idgen installed
"""
import sys
from pathlib import Path

import psycopg

DB = "idgen_interop"


def main(d: Path, dsn: str) -> None:
    lines = [ln.split() for f in sorted(d.glob("*.ids")) for ln in f.read_text().splitlines()]
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {DB}")
        admin.execute(f"CREATE DATABASE {DB}")
    try:
        with psycopg.connect(dsn, dbname=DB, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION pg_idgen")
            # Every id taken apart in one statement, in the files' order.
            out = [r for (r,) in conn.execute("""
                SELECT CASE WHEN u.k = 'x'
                    THEN pg_catalog.format('x %%s %%s %%s %%s %%s', c.x, extract(epoch FROM xid12_time(c.x))::bigint,
                                           ('x' || encode(xid12_machine(c.x), 'hex'))::bit(24)::int,
                                           xid12_pid(c.x), xid12_counter(c.x))
                    ELSE pg_catalog.format('s %%s %%s %%s %%s', c.s,
                                           (extract(epoch FROM snowflake_time(c.s)) * 1000)::bigint,
                                           snowflake_worker(c.s), snowflake_sequence(c.s)) END
                  FROM unnest(%s::text[], %s::text[]) WITH ORDINALITY AS u(k, v, n),
                       LATERAL (SELECT CASE WHEN u.k = 'x' THEN u.v::xid12 END AS x,
                                       CASE WHEN u.k = 's' THEN u.v::bigint END AS s) c
                 ORDER BY u.n""", ([k for k, _ in lines], [v for _, v in lines]))]
            xids = [v for k, v in lines if k == "x"]
            flakes = [int(v) for k, v in lines if k == "s"]
            out += ["ox %s" % r for (r,) in conn.execute(
                "SELECT x::text FROM unnest(%s::xid12[]) x ORDER BY x", (xids,))]
            out += ["os %s" % r for (r,) in conn.execute(
                "SELECT s FROM unnest(%s::bigint[]) s ORDER BY s", (flakes,))]
    finally:
        with psycopg.connect(dsn, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {DB}")
    (d / "server.read").write_text("\n".join(out) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2])
