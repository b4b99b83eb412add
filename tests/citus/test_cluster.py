"""pg_idgen on a Citus cluster: what a user who shards by an id relies on. The tests run in this
file's order on one set of tables (the fixture `tables` loads them once)."""
import random
import re
import time

import psycopg
import pytest

from conftest import CLUSTERS, HOST, NODE_NAMES, PORTS, connect, run_concurrently

ORDERS = 120_000  # cursor pagination goes over more than 100,000 rows
EVENTS = 120_000
EPOCH_MS = 1288834974657  # pg_idgen.snowflake_epoch's default


def test_extension_propagated_with_each_nodes_ids(cluster):
    for node in (1, 2, 3):
        with connect(node) as conn:
            version, machine, worker = conn.execute(
                "SELECT e.extversion, xid12_current_machine(), current_setting('pg_idgen.worker_id') "
                "FROM pg_extension e WHERE e.extname = 'pg_idgen'"
            ).fetchone()
            assert machine == bytes([0, 0, node])
            assert worker == str(node)
            if node == 1:
                expected = version
            assert version == expected


@pytest.fixture(scope="module")
def tables(cluster):
    """A reference table keyed by rapkey; orders (xid12) with co-located order_items and events
    (Snowflake bigint) with co-located event_tags, each child with a foreign key to its parent;
    120,000 orders and events spread over 83 days, and local copies on the coordinator."""
    with connect(1) as c:
        c.execute("CREATE TABLE regions (key rapkey PRIMARY KEY, name text NOT NULL)")
        c.execute("SELECT create_reference_table('regions')")
        c.execute(
            "INSERT INTO regions SELECT rapkey_build('reg', 'cn', r), r "
            "FROM unnest(ARRAY['sh', 'bj', 'gz', 'sz']) r"
        )
        c.execute(
            "CREATE TABLE orders (id xid12 PRIMARY KEY DEFAULT gen_xid12(), created_at timestamptz NOT NULL, "
            "region rapkey NOT NULL REFERENCES regions (key), amount integer NOT NULL)"
        )
        c.execute("SELECT create_distributed_table('orders', 'id')")
        c.execute(
            "CREATE TABLE order_items (order_id xid12 NOT NULL REFERENCES orders (id), line integer NOT NULL, "
            "item_id xid12 NOT NULL DEFAULT gen_xid12(), PRIMARY KEY (order_id, line))"
        )
        c.execute("SELECT create_distributed_table('order_items', 'order_id', colocate_with => 'orders')")
        c.execute(
            "CREATE TABLE events (id bigint PRIMARY KEY DEFAULT gen_snowflake(), at timestamptz NOT NULL, "
            "kind text NOT NULL)"
        )
        c.execute("SELECT create_distributed_table('events', 'id')")
        c.execute(
            "CREATE TABLE event_tags (event_id bigint NOT NULL REFERENCES events (id), tag text NOT NULL, "
            "PRIMARY KEY (event_id, tag))"
        )
        c.execute("SELECT create_distributed_table('event_tags', 'event_id', colocate_with => 'events')")

        # One order a minute from 2026-01-01 (several per second would do as well: gen_xid12(t)
        # counts within the second); the regions in turn.
        c.execute(
            "INSERT INTO orders (id, created_at, region, amount) "
            "SELECT gen_xid12(t), t, rapkey_build('reg', 'cn', (ARRAY['sh', 'bj', 'gz', 'sz'])[1 + g %% 4]), g "
            "FROM generate_series(1, %s) g, LATERAL (SELECT timestamptz '2026-01-01 00:00:00+00' + g * interval '1 minute') s(t)",
            (ORDERS,),
        )
        c.execute(
            "INSERT INTO order_items (order_id, line) SELECT id, l FROM orders, generate_series(1, 2) l "
            "WHERE amount % 10 = 0"
        )
        # Snowflake ids of past instants, made with the layout (worker 1, sequence g mod 4096),
        # one every minute; gen_snowflake() makes only ids of now.
        c.execute(
            "INSERT INTO events (id, at, kind) "
            "SELECT (((extract(epoch FROM t) * 1000)::bigint - %s) << 22) | (1 << 12) | (g %% 4096), t, 'k' || g %% 7 "
            "FROM generate_series(1, %s) g, LATERAL (SELECT timestamptz '2026-01-01 00:00:00+00' + g * interval '1 minute') s(t)",
            (EPOCH_MS, EVENTS),
        )
        c.execute("INSERT INTO events (at, kind) SELECT now(), 'now' FROM generate_series(1, 1000)")
        c.execute("INSERT INTO event_tags SELECT id, 'tag' FROM events WHERE kind = 'k3'")
        c.execute("CREATE TABLE orders_local AS SELECT * FROM orders")
        c.execute("CREATE INDEX ON orders_local (id)")
        c.execute("CREATE TABLE events_local AS SELECT * FROM events")
        c.execute("CREATE INDEX ON events_local (id)")
        for local in ("orders_local", "events_local"):
            # A plain table of the coordinator, not a Citus table.
            assert c.execute("SELECT count(*) FROM pg_dist_partition WHERE logicalrelid = %s::regclass",
                             (local,)).fetchone()[0] == 0
        c.execute("ANALYZE orders_local, events_local")
    return True


def explain(conn, sql: str, params=None) -> str:
    return "\n".join(r[0] for r in conn.execute("EXPLAIN " + sql, params).fetchall())


def task_count(plan: str) -> int:
    return int(re.search(r"Task Count: (\d+)", plan).group(1))


@pytest.mark.parametrize("node", [1, 2, 3])
def test_id_equals_parameter_is_routed_to_one_task(tables, node):
    with connect(node) as c:
        some_order = c.execute("SELECT id FROM orders_local ORDER BY amount LIMIT 1 OFFSET 777" if node == 1
                               else "SELECT id FROM orders LIMIT 1").fetchone()[0]
        some_event = c.execute("SELECT id FROM events LIMIT 1").fetchone()[0]
        # A generic plan: the shard is chosen when the parameter is known.
        c.execute("SET plan_cache_mode = force_generic_plan")
        c.execute("PREPARE o(xid12) AS SELECT * FROM orders WHERE id = $1")
        c.execute("PREPARE e(bigint) AS SELECT * FROM events WHERE id = $1")
        c.execute("PREPARE all_after(xid12) AS SELECT * FROM orders WHERE id > $1 ORDER BY id LIMIT 10")
        for stmt, value in (("o", f"'{some_order}'"), ("e", some_event)):
            plan = explain(c, f"EXECUTE {stmt}({value})")
            assert task_count(plan) == 1, plan
        # id > $1 asks every shard. Citus plans such a statement anew for each execution (a
        # generic plan of it is refused, so leave plan_cache_mode at auto): drivers that prepare
        # the pagination query and run it many times get rows every time.
        c.execute("RESET plan_cache_mode")
        for _ in range(7):
            assert len(c.execute(f"EXECUTE all_after('{some_order}')").fetchall()) == 10
        assert task_count(explain(c, f"EXECUTE all_after('{some_order}')")) == 8  # citus.shard_count
        # A parent with its co-located children: one task too.
        plan = explain(c, f"SELECT * FROM orders o JOIN order_items i ON i.order_id = o.id WHERE o.id = '{some_order}'")
        assert task_count(plan) == 1, plan
        assert c.execute(f"EXECUTE o('{some_order}')").fetchone()[0] == some_order


def test_foreign_keys_hold(tables):
    with connect(1) as c:
        with pytest.raises(psycopg.errors.ForeignKeyViolation):
            c.execute("INSERT INTO order_items (order_id, line) VALUES (gen_xid12(), 1)")
        with pytest.raises(psycopg.errors.ForeignKeyViolation):
            c.execute("INSERT INTO orders (created_at, region, amount) VALUES (now(), rapkey_build('reg', 'us', 'ny'), 1)")
        with pytest.raises(psycopg.errors.ForeignKeyViolation):
            c.execute("INSERT INTO event_tags VALUES (1, 'x')")
        # The children's rows all have their parent (the join is co-located).
        assert c.execute(
            "SELECT count(*), count(o.id) FROM order_items i LEFT JOIN orders o ON o.id = i.order_id"
        ).fetchone() == (ORDERS // 10 * 2, ORDERS // 10 * 2)


def pages(conn, table: str, size: int, cast: str) -> list:
    out, cursor = [], None
    while True:
        if cursor is None:
            rows = conn.execute(f"SELECT id, amount FROM {table} ORDER BY id LIMIT %s" if cast == "xid12"
                                else f"SELECT id, kind FROM {table} ORDER BY id LIMIT %s", (size,)).fetchall()
        else:
            rows = conn.execute(
                f"SELECT id, {'amount' if cast == 'xid12' else 'kind'} FROM {table} "
                f"WHERE id > %s::{cast} ORDER BY id LIMIT %s", (cursor, size)).fetchall()
        if not rows:
            return out
        out.append(rows)
        cursor = rows[-1][0]


@pytest.mark.parametrize("table,cast,size", [("orders", "xid12", 2500), ("events", "bigint", 10000)])
def test_cursor_pagination_matches_a_local_copy(tables, table, cast, size):
    with connect(1) as c:
        distributed = pages(c, table, size, cast)
        local = pages(c, f"{table}_local", size, cast)
    assert sum(len(p) for p in distributed) >= 100_000
    assert len(distributed) == len(local)
    for d, lo in zip(distributed, local):
        assert d == lo


def test_time_ranges_match_a_local_copy(tables):
    rnd = random.Random(18)
    with connect(1) as c:
        for _ in range(6):
            start = f"2026-01-{rnd.randint(1, 28):02d} {rnd.randint(0, 23):02d}:{rnd.randint(0, 59):02d}:00+00"
            days = rnd.choice([1, 3, 10])
            for table, lo, hi, time_col in (("orders", "xid12_min", "xid12_max", "created_at"),
                                            ("events", "snowflake_min", "snowflake_max", "at")):
                q = (f"SELECT count(*), min(id), max(id), sum(hashtext(id::text)) FROM {{}} "
                     f"WHERE id >= {lo}(%(a)s) AND id <= {hi}(%(a)s::timestamptz + %(d)s * interval '1 day')")
                p = {"a": start, "d": days}
                distributed = c.execute(q.format(table), p).fetchone()
                local = c.execute(q.format(table + "_local"), p).fetchone()
                truth = c.execute(
                    f"SELECT count(*) FROM {table}_local WHERE {time_col} >= %(a)s "
                    f"AND {time_col} < %(a)s::timestamptz + %(d)s * interval '1 day' + interval '1 second'", p
                ).fetchone()[0]
                assert distributed == local
                assert distributed[0] == truth > 0


# rapkey_next across the cluster -----------------------------------------------------------------

def next_keys(node: int, prefix: str, count: int) -> list:
    with connect(node) as c:
        return [c.execute("SELECT rapkey_next(%s)", (prefix,)).fetchone()[0] for _ in range(count)]


def test_rapkey_next_refuses_until_the_counter_is_distributed(cluster):
    # Each node's own counter would hand out the same keys (0.5.0 gave 90 keys, 30 distinct, for
    # 30 calls on each of 3 nodes): until the counter is shared, rapkey_next is an error that
    # names the step, on every node.
    for node in (1, 2, 3):
        with connect(node) as c:
            with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState) as e:
                c.execute("SELECT rapkey_next('inv.eu')")
            assert e.value.diag.message_primary == "rapkey_counter is not shared by this Citus cluster yet"
            assert e.value.diag.message_hint == "Run SELECT rapkey_counter_distribute() once on the coordinator."
    # Numbers the nodes handed out before they formed a cluster (here written by hand).
    for node, last in ((1, 2), (2, 5), (3, 3)):
        with connect(node) as c:
            c.execute("INSERT INTO rapkey_counter VALUES ('inv.eu', %s)", (last,))
    with connect(2) as c:
        with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState, match="runs on the coordinator"):
            c.execute("SELECT rapkey_counter_distribute()")
    with connect(1) as c:
        c.execute("SELECT rapkey_counter_distribute()")
        assert c.execute("SELECT partmethod FROM pg_dist_partition WHERE logicalrelid = 'rapkey_counter'::regclass"
                         ).fetchone()[0] == "n"  # a reference table
        notices = []
        c.add_notice_handler(lambda d: notices.append(d.message_primary))
        c.execute("SELECT rapkey_counter_distribute()")
        assert notices == ["rapkey_counter is already shared by the cluster"]
    # The numbers the nodes handed out are not handed out again: the next is the highest + 1.
    assert next_keys(3, "inv.eu", 1) == [rapkey("inv.eu.6")]
    assert next_keys(2, "inv.eu", 1) == [rapkey("inv.eu.7")]


def rapkey(body: str) -> str:
    with connect(1) as c:
        return c.execute("SELECT rapkey_build(split_part(%s, '.', 1), VARIADIC (string_to_array(%s, '.'))[2:])",
                         (body, body)).fetchone()[0]


def test_rapkey_next_is_unique_and_gapless_across_the_cluster(cluster):
    committed = []
    rolled_back = []

    def client(k: int) -> None:
        node = 1 + k % 3
        with connect(node) as c:
            if k == 4:  # on node 2: transactions that roll back while the others go on
                for _ in range(10):
                    with c.transaction(force_rollback=True):
                        rolled_back.append(c.execute("SELECT rapkey_next('ord.cn.sh')").fetchone()[0])
                        time.sleep(0.02)
                return
            for _ in range(25):
                committed.append(c.execute("SELECT rapkey_next('ord.cn.sh')").fetchone()[0])

    run_concurrently(9, client)
    numbers = sorted(int(k.split(".")[-1].split("-")[0]) for k in committed)
    assert len(committed) == 8 * 25
    assert numbers == list(range(1, 8 * 25 + 1))  # unique and without gaps
    assert len(rolled_back) == 10
    for node in (1, 2, 3):
        with connect(node) as c:
            assert c.execute("SELECT last_value FROM rapkey_counter WHERE prefix = 'ord.cn.sh'").fetchone()[0] == 200


# Writes through every node at once ---------------------------------------------------------------

def test_writes_through_every_node_make_unique_ids_naming_their_node(cluster):
    with connect(1) as c:
        c.execute(
            "CREATE TABLE writes (id xid12 PRIMARY KEY DEFAULT gen_xid12(), flake bigint NOT NULL DEFAULT gen_snowflake(), "
            "key rapkey NOT NULL, node integer NOT NULL)"
        )
        c.execute("SELECT create_distributed_table('writes', 'id')")
    rows_per_client = 200

    def client(k: int) -> None:
        node = 1 + k % 3
        with connect(node) as c:
            for i in range(rows_per_client // 20):
                if i % 2:  # several rows per statement (in VALUES: see README, Scaling out, rapkey_next)
                    c.execute("INSERT INTO writes (key, node) VALUES "
                              + ", ".join(["(rapkey_next('wr.all'), %(node)s)"] * 20), {"node": node})
                else:  # one row per statement, in one transaction
                    with c.transaction():
                        for _ in range(20):
                            c.execute("INSERT INTO writes (key, node) VALUES (rapkey_next('wr.all'), %s)", (node,))

    run_concurrently(9, client)  # three clients on each node
    with connect(1) as c:
        total, ids, flakes, keys = c.execute(
            "SELECT count(*), count(DISTINCT id), count(DISTINCT flake), count(DISTINCT key) FROM writes").fetchone()
        assert total == ids == flakes == keys == 9 * rows_per_client
        per_node = dict(c.execute("SELECT node, count(*) FROM writes GROUP BY node").fetchall())
        assert per_node == {1: 3 * rows_per_client, 2: 3 * rows_per_client, 3: 3 * rows_per_client}
        # Each xid12 carries the machine id, each Snowflake id the worker id, of the node whose
        # client inserted it (Citus evaluates the defaults on the node that plans the insert).
        assert c.execute(
            "SELECT count(*) FROM writes WHERE xid12_machine(id) <> substring(int4send(node) FROM 2) "
            "OR snowflake_worker(flake) <> node").fetchone()[0] == 0
        numbers = sorted(int(k.split(".")[-1].split("-")[0]) for (k,) in c.execute("SELECT key FROM writes"))
        assert numbers == list(range(1, 9 * rows_per_client + 1))


# The shared-identity guard ---------------------------------------------------------------------------

def set_on_node(node: int, setting: str, value) -> None:
    """ALTER SYSTEM SET (RESET with None: back to postgresql.conf's, where node n has n) and a
    reload; then polls SHOW in new sessions on that node until they have it (the sessions the
    next statements open, from any node, are as new), within 60 s."""
    with connect(node) as c:
        if value is None:
            c.execute(f"ALTER SYSTEM RESET {setting}")
        else:
            c.execute(f"ALTER SYSTEM SET {setting} = {int(value)}")
        c.execute("SELECT pg_reload_conf()")
    expected = str(node if value is None else int(value))
    seen, deadline = None, time.monotonic() + 60
    while time.monotonic() < deadline:
        with connect(node) as c:
            seen = c.execute(f"SHOW {setting}").fetchone()[0]
        if seen == expected:
            return
        time.sleep(0.05)
    raise AssertionError(f"{setting} on node {node} still reads {seen!r} 60 s after pg_reload_conf(), "
                         f"expected {expected!r} (server log: {CLUSTERS}/{NODE_NAMES[node - 1]}/server.log)")


def test_identity_guard_reports_nodes_sharing_an_id(cluster):
    names = [f"{HOST}:{p}" for p in PORTS]
    with connect(1) as c:
        assert c.execute("SELECT * FROM idgen_check_cluster_identities()").fetchall() == [
            (names[0], 1, 1), (names[1], 2, 2), (names[2], 3, 3)]
    try:
        set_on_node(3, "pg_idgen.machine_id", 1)
        for node in (1, 2):  # from the coordinator and from a worker
            with connect(node) as c:
                with pytest.raises(psycopg.errors.InvalidParameterValue) as e:
                    c.execute("SELECT * FROM idgen_check_cluster_identities()")
                assert e.value.diag.message_primary == f"nodes {names[0]} and {names[2]} share the machine id 1"
                assert "pg_idgen.machine_id" in e.value.diag.message_hint
        set_on_node(3, "pg_idgen.machine_id", 3)
        set_on_node(3, "pg_idgen.worker_id", 2)
        with connect(1) as c:
            with pytest.raises(psycopg.errors.InvalidParameterValue) as e:
                c.execute("SELECT * FROM idgen_check_cluster_identities()")
            assert e.value.diag.message_primary == f"nodes {names[1]} and {names[2]} share the worker id 2"
        # Unset worker ids (-1: no Snowflake ids there) are no conflict.
        set_on_node(2, "pg_idgen.worker_id", -1)
        set_on_node(3, "pg_idgen.worker_id", -1)
        with connect(1) as c:
            assert [r[2] for r in c.execute("SELECT * FROM idgen_check_cluster_identities()")] == [1, -1, -1]
    finally:
        for node in (2, 3):
            set_on_node(node, "pg_idgen.machine_id", None)  # back to postgresql.conf's
            set_on_node(node, "pg_idgen.worker_id", None)
    with connect(1) as c:
        assert len(c.execute("SELECT * FROM idgen_check_cluster_identities()").fetchall()) == 3


# idgen_backfill ------------------------------------------------------------------------------------

def test_backfill_refuses_citus_tables_and_fills_shard_by_shard(cluster):
    with connect(1) as c:
        c.execute("CREATE TABLE legacy (k bigint PRIMARY KEY, created_at timestamptz NOT NULL, new_id xid12)")
        c.execute("SELECT create_distributed_table('legacy', 'k')")
        c.execute("INSERT INTO legacy (k, created_at) "
                  "SELECT g, timestamptz '2025-06-01 00:00:00+00' + g * interval '10 seconds' FROM generate_series(1, 5000) g")
        c.execute("CREATE TABLE legacy_ref (k bigint PRIMARY KEY, new_id xid12)")
        c.execute("SELECT create_reference_table('legacy_ref')")
        c.execute("INSERT INTO legacy_ref (k) SELECT generate_series(1, 10)")
    for node in (1, 2):  # the coordinator, and a worker (which has the table's metadata too)
        with connect(node) as c:
            with pytest.raises(psycopg.errors.FeatureNotSupported) as e:
                c.execute("CALL idgen_backfill('legacy', 'new_id', 'gen_xid12(created_at)', 500)")
            assert e.value.diag.message_primary == 'idgen_backfill cannot fill the Citus distributed table "public.legacy" from here'
            assert "run_command_on_shards('public.legacy', $cmd$CALL public.idgen_backfill('%s', ...)$cmd$)" in e.value.diag.message_hint
            with pytest.raises(psycopg.errors.FeatureNotSupported) as e:
                c.execute("CALL idgen_backfill('legacy_ref', 'new_id', 'gen_xid12()', 5)")
            assert e.value.diag.message_primary == 'idgen_backfill cannot fill the Citus reference table "public.legacy_ref"'
    with connect(1) as c:
        assert c.execute("SELECT count(*) FROM legacy WHERE new_id IS NOT NULL").fetchone()[0] == 0
        # The alternative the hint names: each shard filled where it is, in batches, with the
        # procedure's guarantees within the shard.
        results = c.execute(
            "SELECT success, result FROM run_command_on_shards('legacy', "
            "$cmd$CALL public.idgen_backfill('%s', 'new_id', 'gen_xid12(created_at)', 200)$cmd$)").fetchall()
        assert results == [(True, "CALL")] * 8
        rows = c.execute(
            "SELECT get_shard_id_for_distribution_column('legacy', k), k, created_at, new_id::text, "
            "get_byte(xid12_machine(new_id), 2), xid12_time(new_id) = created_at FROM legacy ORDER BY 1, 2").fetchall()
        node_of_shard = dict(c.execute(
            "SELECT p.shardid, n.nodeport - %s + 1 FROM pg_dist_shard s JOIN pg_dist_placement p USING (shardid) "
            "JOIN pg_dist_node n ON n.groupid = p.groupid WHERE s.logicalrelid = 'legacy'::regclass", (PORTS[0],)).fetchall())
        progress = c.execute(
            "SELECT result FROM run_command_on_workers("
            "$q$SELECT count(*) FROM idgen_backfill_progress WHERE finished_at IS NOT NULL AND rows_done = rows_total$q$)"
        ).fetchall()
    assert len(rows) == 5000
    assert len({r[3] for r in rows}) == 5000  # unique
    assert all(r[3] is not None and r[5] for r in rows)  # filled, with each row's creation second
    assert all(r[4] == node_of_shard[r[0]] for r in rows)  # made by the node holding the shard
    by_shard = {}
    for shard, k, _, new_id, _, _ in rows:
        by_shard.setdefault(shard, []).append(new_id)
    for ids in by_shard.values():  # in the primary key's order within each shard
        assert ids == sorted(ids)
    assert sum(int(r[0]) for r in progress) == 8  # one finished run per shard


# Shard moves and a rebalance -------------------------------------------------------------------------

def snapshot(c) -> dict:
    return {t: c.execute(f"SELECT count(*), count(DISTINCT {k}), sum(hashtext({k}::text)::numeric) FROM {t}").fetchone()
            for t, k in (("orders", "id"), ("order_items", "item_id"), ("events", "id"), ("event_tags", "event_id"),
                         ("writes", "id"), ("legacy", "new_id"))}


def shards_per_node(c, table: str) -> dict:
    return dict(c.execute(
        "SELECT n.nodeport, count(*) FROM pg_dist_shard s JOIN pg_dist_placement p USING (shardid) "
        "JOIN pg_dist_node n ON n.groupid = p.groupid WHERE s.logicalrelid = %s::regclass GROUP BY 1", (table,)).fetchall())


def test_shard_move_and_rebalance_keep_rows_ids_and_indexes(tables):
    with connect(1) as c:
        before = snapshot(c)
        sample = c.execute("SELECT id, amount FROM orders_local ORDER BY amount LIMIT 50").fetchall()
        shard = c.execute(
            "SELECT s.shardid FROM pg_dist_shard s JOIN pg_dist_placement p USING (shardid) "
            "JOIN pg_dist_node n ON n.groupid = p.groupid WHERE s.logicalrelid = 'orders'::regclass AND n.nodeport = %s "
            "ORDER BY 1 LIMIT 1", (PORTS[1],)).fetchone()[0]
        c.execute("SELECT citus_move_shard_placement(%s, %s, %s, %s, %s, shard_transfer_mode => 'block_writes')",
                  (shard, HOST, PORTS[1], HOST, PORTS[2]))
        assert shards_per_node(c, "orders") == {PORTS[1]: 3, PORTS[2]: 5}
        assert snapshot(c) == before
        c.execute("SELECT rebalance_table_shards(shard_transfer_mode => 'block_writes')")
        assert shards_per_node(c, "orders") == {PORTS[1]: 4, PORTS[2]: 4}
        assert snapshot(c) == before
        for order_id, amount in sample:  # routed to the shards' new places
            assert c.execute("SELECT amount FROM orders WHERE id = %s::xid12", (order_id,)).fetchone()[0] == amount
        c.execute("CREATE EXTENSION IF NOT EXISTS amcheck")  # propagated to the workers
        c.execute("CALL citus_cleanup_orphaned_resources()")  # the moved shards' old copies
    checked = 0
    for node in (2, 3):
        with connect(node) as c:
            c.execute("SET citus.override_table_visibility = off")  # shards are hidden otherwise
            indexes = [r[0] for r in c.execute(
                "SELECT i.indexrelid::regclass::text FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid "
                "WHERE t.relname ~ '^(orders|order_items|events|event_tags|writes|legacy)_[0-9]+$'").fetchall()]
            for index in indexes:
                c.execute("SELECT bt_index_check(%s::regclass, true)", (index,))
            checked += len(indexes)
    assert checked == 6 * 8  # every shard's primary key, on the node that holds it now
    # New ids after the moves: still unique, wherever they are made.
    for node in (1, 2, 3):
        with connect(node) as c:
            c.execute("INSERT INTO writes (key, node) VALUES " + ", ".join(["(rapkey_next('wr.all'), %(node)s)"] * 100),
                      {"node": node})
    with connect(1) as c:
        assert c.execute("SELECT count(*) = count(DISTINCT id) AND count(*) = count(DISTINCT flake) FROM writes").fetchone()[0]


# The writer registry ---------------------------------------------------------------------------

def test_identity_check_reserves_every_nodes_ids_in_the_coordinators_registry(cluster):
    names = [f"{HOST}:{p}" for p in PORTS]
    with connect(1) as c:
        c.execute("SELECT * FROM idgen_check_cluster_identities()")
        reserved = c.execute(
            "SELECT kind, slot, writer FROM idgen_grants WHERE reserved AND writer LIKE 'Citus node %' "
            "ORDER BY kind, slot").fetchall()
        for n, name in enumerate(names, start=1):  # node n has machine id and worker id n
            assert ("snowflake", n, f"Citus node {name}") in reserved
            assert ("xid12", n, f"Citus node {name}") in reserved
        # Calling it again changes nothing; a writer never gets a node's worker id.
        c.execute("SELECT * FROM idgen_check_cluster_identities()")
        assert c.execute("SELECT count(*) FROM idgen_grants WHERE reserved").fetchone()[0] == len(
            c.execute("SELECT DISTINCT kind, slot FROM idgen_grants WHERE reserved").fetchall())
        granted = {r[0] for r in c.execute(
            "SELECT (idgen_acquire('snowflake', 'citus-test-' || n, '1 minute')).slot FROM generate_series(1, 100) n")}
        assert not granted & {1, 2, 3}
