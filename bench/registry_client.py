"""The Python client's grant-bound generators against the plain ones, per id, in the same run.

Usage (a server with pg_idgen 0.6.0+ in the database; the DSN defaults to the bench cluster's
PG_IDGEN_HOST / PG_IDGEN_PORT, database postgres):
  .venv/bin/python bench/registry_client.py [--dsn DSN] [--ids N] [--rounds N] [--quick]

- Registry(...).snowflake().next_id() against Snowflake(1).next_id(); target: at most 1.1x.
- Registry(...).xid12().new() against XidGenerator(1).new(); target: at most 1.1x.

The grants have a 10-minute lease, so no round ends its window: what is measured is the
per-id cost (the window checks around the plain generator's step), not the registry's round
trips, which happen once per half lease in a background thread. Each contender runs
alternately (the order rotates every round) after a warm-up; a ratio is the median of the
per-round ratios.
"""
import argparse
import os
import statistics
import time

import psycopg

import pg_idgen
from pg_idgen import Snowflake, XidGenerator


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


def report(title: str, times: dict, n: int, versus: str, target: dict) -> bool:
    print(f"\n{title}")
    ok = True
    for name, t in times.items():
        r = ratio(times, name, versus)
        goal = target.get(name)
        met = ""
        if goal is not None:
            met = " (target <= %.1fx: %s)" % (goal, "met" if r <= goal else "NOT met")
            ok = ok and r <= goal
        print(f"  {name:<45} {statistics.median(t) / n * 1e9:8.1f} ns/id  {r:5.2f}x {versus}{met}")
    return ok


def loop(f, n):
    def run():
        start = time.perf_counter()
        for _ in range(n):
            f()
        return time.perf_counter() - start
    return run


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dsn", default=None)
    ap.add_argument("--ids", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--quick", action="store_true", help="smoke-test scale: 50,000 ids, 2 rounds")
    args = ap.parse_args()
    if args.quick:
        args.ids, args.rounds = 50_000, 2
    dsn = args.dsn or (f"host={os.environ['PG_IDGEN_HOST']} port={os.environ['PG_IDGEN_PORT']} "
                       "user=postgres dbname=postgres")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_idgen")
    n = args.ids
    with pg_idgen.Registry(dsn, writer=f"bench/registry_client.py:{os.getpid()}") as reg:
        bound_sf = reg.snowflake("10 minutes")
        bound_xid = reg.xid12("10 minutes")
        plain_sf = Snowflake(1)
        plain_xid = XidGenerator(1)
        times = alternate({"Registry.snowflake().next_id()": loop(bound_sf.next_id, n),
                           "Snowflake(1).next_id()": loop(plain_sf.next_id, n)}, args.rounds)
        ok = report(f"Snowflake: {n:,} ids in one thread", times, n, "Snowflake(1).next_id()",
                    {"Registry.snowflake().next_id()": 1.1})
        times = alternate({"Registry.xid12().new()": loop(bound_xid.new, n),
                           "XidGenerator(1).new()": loop(plain_xid.new, n)}, args.rounds)
        ok = report(f"xid12: {n:,} ids in one thread", times, n, "XidGenerator(1).new()",
                    {"Registry.xid12().new()": 1.1}) and ok
    print("\nboth targets met" if ok else "\na target was NOT met")


if __name__ == "__main__":
    main()
