"""The Python client's costs against what a user has without it, measured in the same run.

Usage: bash scripts/bench.sh VERSION clients [--rows N] [--rounds N]
  (bench.sh builds a release version, starts a throwaway preloaded cluster and runs this.)

- Loading N xid12 values as pg_idgen.Xid through the psycopg binary loader, against loading the
  same ids as str (their text column, psycopg's C text loader); psycopg's C uuid loader on as many
  uuids is reported beside them. Target: at most 1.5x the str load.
- The same with asyncpg: the binary codec against the ids as str, and asyncpg's own uuid codec.
- Xid.new() per id against uuid.uuid4() (target: at most 1.0x), and Snowflake.next_id() beside.

Each contender runs alternately (the order rotates every round) after a warm-up; a ratio is the
median of the per-round ratios.
"""
import argparse
import asyncio
import os
import statistics
import time
import uuid

import asyncpg
import psycopg

import pg_idgen.asyncpg
import pg_idgen.psycopg
from pg_idgen import Snowflake, Xid

HOST = os.environ["PG_IDGEN_HOST"]
PORT = os.environ["PG_IDGEN_PORT"]
DSN = f"host={HOST} port={PORT} user=postgres dbname=postgres"


def alternate(cases: dict, rounds: int) -> dict:
    names = list(cases)
    for name in names:
        cases[name]()
    times = {n: [] for n in names}
    for r in range(rounds):
        k = r % len(names)
        for name in names[k:] + names[:k]:
            times[name].append(cases[name]())
    return times


def ratio(times: dict, a: str, b: str) -> float:
    return statistics.median(x / y for x, y in zip(times[a], times[b]))


def report(title: str, times: dict, n: int, versus: str, target: dict) -> list:
    print(f"\n{title}")
    lines = []
    for name, t in times.items():
        r = ratio(times, name, versus)
        goal = target.get(name)
        met = "" if goal is None else (" (target <= %.1fx: %s)" % (goal, "met" if r <= goal else "NOT met"))
        line = f"  {name:<50} {statistics.median(t) / n * 1e9:8.1f} ns/value  {r:5.2f}x {versus}{met}"
        print(line)
        lines.append(line)
    return lines


class _IdentityLoader(psycopg.adapt.Loader):
    format = psycopg.pq.Format.BINARY

    def load(self, data):
        return data


def load_psycopg(rows: int, rounds: int) -> None:
    with psycopg.connect(DSN, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_idgen")
        conn.execute("DROP TABLE IF EXISTS bench_client_ids")
        conn.execute("CREATE TABLE bench_client_ids AS SELECT x, x::text AS t, gen_random_uuid() AS u "
                     "FROM (SELECT gen_xid12() AS x FROM generate_series(1, %s)) s", [rows])
        conn.execute("VACUUM ANALYZE bench_client_ids")
        pg_idgen.psycopg.register(conn)
        binary = conn.cursor(binary=True)
        text = conn.cursor()

        def fetch(cur, column):
            def run():
                start = time.perf_counter()
                values = cur.execute(f"SELECT {column} FROM bench_client_ids").fetchall()
                took = time.perf_counter() - start
                assert len(values) == rows
                return took
            return run

        # The floor of any loader written in Python: psycopg's call of it, returning the buffer.
        floor = psycopg.connect(DSN, autocommit=True)
        floor.adapters.register_loader(pg_idgen.psycopg.register(floor).oid, _IdentityLoader)
        floor_cur = floor.cursor(binary=True)
        first = binary.execute("SELECT x, t, u FROM bench_client_ids LIMIT 1").fetchone()
        assert isinstance(first[0], Xid) and str(first[0]) == first[1] and isinstance(first[2], uuid.UUID)
        times = alternate({
            "xid12 -> Xid (pg_idgen binary loader)": fetch(binary, "x"),
            "xid12 -> Xid (pg_idgen text loader)": fetch(text, "x"),
            "same ids as str (text column, C loader)": fetch(text, "t"),
            "uuid -> UUID (psycopg C binary loader)": fetch(binary, "u"),
            "xid12 -> buffer (a Python loader doing nothing)": fetch(floor_cur, "x"),
        }, rounds)
        floor.close()
        report(f"psycopg {psycopg.__version__} ({psycopg.pq.__impl__}): fetchall() of {rows:,} values",
               times, rows, "same ids as str (text column, C loader)",
               {"xid12 -> Xid (pg_idgen binary loader)": 1.5})


def load_asyncpg(rows: int, rounds: int) -> None:
    async def go():
        conn = await asyncpg.connect(host=HOST, port=int(PORT), user="postgres", database="postgres")
        await pg_idgen.asyncpg.register(conn)

        def fetch(column):
            async def run():
                start = time.perf_counter()
                values = await conn.fetch(f"SELECT {column} FROM bench_client_ids")
                took = time.perf_counter() - start
                assert len(values) == rows
                return took
            return run

        floor = await asyncpg.connect(host=HOST, port=int(PORT), user="postgres", database="postgres")
        schema = await floor.fetchval("SELECT typnamespace::regnamespace::text FROM pg_type WHERE typname = 'xid12'")
        # The floor of any decoder written in Python: asyncpg's call of it, returning the bytes.
        await floor.set_type_codec("xid12", schema=schema, encoder=bytes, decoder=lambda b: b, format="binary")

        def fetch_floor():
            async def run():
                start = time.perf_counter()
                values = await floor.fetch("SELECT x FROM bench_client_ids")
                took = time.perf_counter() - start
                assert len(values) == rows
                return took
            return run

        cases = {
            "xid12 -> Xid (pg_idgen binary codec)": fetch("x"),
            "xid12 -> bytes (a Python decoder doing nothing)": fetch_floor(),
            "same ids as str (text column)": fetch("t"),
            "uuid -> asyncpg UUID (asyncpg's C codec)": fetch("u"),
        }
        names = list(cases)
        for name in names:
            await cases[name]()
        times = {n: [] for n in names}
        for r in range(rounds):
            k = r % len(names)
            for name in names[k:] + names[:k]:
                times[name].append(await cases[name]())
        await conn.close()
        await floor.close()
        return times

    times = asyncio.run(go())
    report(f"asyncpg {asyncpg.__version__}: fetch() of {rows:,} values", times, rows,
           "same ids as str (text column)", {"xid12 -> Xid (pg_idgen binary codec)": 1.5})


def generate(n: int, rounds: int) -> None:
    new, uuid4 = Xid.new, uuid.uuid4
    snowflake = Snowflake(1).next_id

    def loop(f):
        def run():
            start = time.perf_counter()
            for _ in range(n):
                f()
            return time.perf_counter() - start
        return run

    times = alternate({"Xid.new()": loop(new), "uuid.uuid4()": loop(uuid4),
                       "Snowflake(1).next_id()": loop(snowflake)}, rounds)
    report(f"generate {n:,} ids in one thread", times, n, "uuid.uuid4()", {"Xid.new()": 1.0})


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="smoke-test scale: 20,000 rows, 1 round")
    args = ap.parse_args()
    if args.quick:
        args.rows, args.rounds = 20_000, 1
    load_psycopg(args.rows, args.rounds)
    load_asyncpg(args.rows, args.rounds)
    generate(min(args.rows, 1_000_000), args.rounds + 2)
    with psycopg.connect(DSN, autocommit=True) as conn:
        conn.execute("DROP TABLE bench_client_ids")


if __name__ == "__main__":
    main()
