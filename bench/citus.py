"""pg_idgen on Citus: inserts into a distributed table (not a timed test).

Usage: bash scripts/test_citus.sh --bench [VERSION] [ROWS]
  (test_citus.sh starts the three-node cluster, coordinator first, makes the database with
  Citus and pg_idgen (start_citus_cluster in scripts/citus.sh), and runs this;
  PG_IDGEN_CITUS_BENCH_ROUNDS sets the rounds, default 3.)

1. ROWS rows (default 1,000,000) inserted through the coordinator into a table distributed by
   its key, by 4 clients in statements of 1,000 rows, with the key's default gen_xid12()
   against bigserial and gen_random_uuid(). The contenders alternate over the rounds; the
   ratios are medians of per-round ratios.
2. Total insert throughput of 6 writers (xid12 keys): all on the coordinator, against 2 on each
   of the three nodes.
3. The cost of a cluster-wide rapkey_next: calls per second by one client on a worker, with the
   node's own counter and after rapkey_counter_distribute().
"""
import os
import statistics
import sys
import threading
import time

import psycopg

PORTS = [int(p) for p in os.environ["PG_IDGEN_CITUS_PORTS"].split()]
HOST = "127.0.0.1"
DB = os.environ["PG_IDGEN_CITUS_DB"]
ROWS = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
BATCH = 1000
ROUNDS = int(os.environ.get("PG_IDGEN_CITUS_BENCH_ROUNDS", "3"))


def connect(node: int = 1, dbname: str = DB) -> psycopg.Connection:
    return psycopg.connect(host=HOST, port=PORTS[node - 1], user="postgres", dbname=dbname, autocommit=True)


KEYS = {
    "xid12 gen_xid12()": "id xid12 PRIMARY KEY DEFAULT gen_xid12()",
    "bigserial": "id bigserial PRIMARY KEY",
    "uuid gen_random_uuid()": "id uuid PRIMARY KEY DEFAULT gen_random_uuid()",
}


def make_table(name: str, key: str) -> None:
    with connect(1) as c:
        c.execute(f"DROP TABLE IF EXISTS {name}")
        c.execute(f"CREATE TABLE {name} ({key}, payload integer NOT NULL, note text NOT NULL)")
        c.execute(f"SELECT create_distributed_table('{name}', 'id')")


def insert(name: str, writers: list[int], rows: int) -> float:
    """rows rows into name by one client per entry of writers (the node it connects to);
    returns the seconds from the first statement to the last commit."""
    per_client = rows // len(writers)
    barrier = threading.Barrier(len(writers) + 1)
    errors = []

    def client(node: int) -> None:
        try:
            with connect(node) as c:
                barrier.wait()
                for _ in range(per_client // BATCH):
                    c.execute(f"INSERT INTO {name} (payload, note) "
                              f"SELECT g, 'row ' || g FROM generate_series(1, {BATCH}) g")
        except Exception as e:  # reported below
            errors.append(e)
            barrier.abort()

    threads = [threading.Thread(target=client, args=(n,)) for n in writers]
    for t in threads:
        t.start()
    barrier.wait()
    started = time.perf_counter()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return time.perf_counter() - started


def main() -> None:
    print(f"1. {ROWS:,} rows through the coordinator into a distributed table (4 clients, "
          f"{BATCH} rows a statement), {ROUNDS} rounds")
    times = {k: [] for k in KEYS}
    names = dict(zip(KEYS, ("t_xid12", "t_bigserial", "t_uuid")))
    order = list(KEYS)
    for r in range(ROUNDS):
        for kind in order[r % 3:] + order[:r % 3]:  # the order rotates
            make_table(names[kind], KEYS[kind])
            times[kind].append(insert(names[kind], [1, 1, 1, 1], ROWS))
            print(f"   round {r + 1}: {kind}: {times[kind][-1]:.1f} s", flush=True)
    for kind in KEYS:
        med = statistics.median(times[kind])
        print(f"   {kind:24s} median {med:6.1f} s  {ROWS / med:9,.0f} rows/s")
    xid = times["xid12 gen_xid12()"]
    for other in ("bigserial", "uuid gen_random_uuid()"):
        ratio = statistics.median(a / b for a, b in zip(xid, times[other]))
        print(f"   xid12 / {other}: {ratio:.2f}x (time)")

    rows = ROWS // 2
    print(f"2. {rows:,} rows by 6 writers into the xid12 table: all on the coordinator, or 2 on each node")
    alone, spread = [], []
    for r in range(ROUNDS):
        make_table("t_xid12", KEYS["xid12 gen_xid12()"])
        alone.append(insert("t_xid12", [1] * 6, rows))
        make_table("t_xid12", KEYS["xid12 gen_xid12()"])
        spread.append(insert("t_xid12", [1, 1, 2, 2, 3, 3], rows))
        print(f"   round {r + 1}: coordinator alone {rows / alone[-1]:,.0f} rows/s, "
              f"every node {rows / spread[-1]:,.0f} rows/s", flush=True)
    ratio = statistics.median(a / b for a, b in zip(alone, spread))
    print(f"   throughput, every node / coordinator alone: {ratio:.2f}x")

    calls = 2000
    print(f"3. {calls} rapkey_next calls, one client on a worker, each in its own transaction")
    for label in ("the node's own counter", "after rapkey_counter_distribute()"):
        if label.startswith("after"):
            with connect(1) as c:
                c.execute("SELECT rapkey_counter_distribute()")
        with connect(2) as c:
            started = time.perf_counter()
            for _ in range(calls):
                c.execute("SELECT rapkey_next('bench.rk')")
            took = time.perf_counter() - started
        print(f"   {label:36s} {calls / took:8,.0f} calls/s  {took / calls * 1000:.2f} ms a call")


if __name__ == "__main__":
    main()
