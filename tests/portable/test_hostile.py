"""The portable edition against the attacks of issue 44 that need no planted code: what a
writer sets in its own session, what a role with nothing but CONNECT can lock, and the backfill
counter's end. Run by tests/portable/run.sh and run_tle.sh after test_portable.py:

    python test_hostile.py OWNER_DSN

OWNER_DSN: the database where the edition is installed in schema idgen, as the installing role.
PORTABLE_WRITER_DSN: a role given the README's grants (given again here); PORTABLE_STRANGER_DSN:
a role with no right in the database but CONNECT (no USAGE on the schema).

Each attack succeeded against the edition before the fix (the cache in idgen_portable.*
settings, advisory locks in the gates, a cycling 24-bit backfill counter), and this file failed
there: forged_epoch (ids equal to another session's), forged_xid12_cache (ids equal to another
session's), forged_fields (another worker, machine and pid in the ids; another machine id under
another TimeZone), stranger_locks (every generator 55P03 after its 2 s lock_timeout),
backfill_counter_end (the counter wrapped, repeating an id), progress_locks (LOCK TABLE on the
backfill's progress table in every mode, and DELETE, allowed).
"""

import os
import sys
import time

import psycopg

failures: list[str] = []
checks = 0

WRITER_GRANTS = [
    "GRANT USAGE ON SCHEMA idgen TO {r}",
    "GRANT SELECT ON idgen.idgen_config TO {r}",
    "GRANT EXECUTE ON FUNCTION idgen.gen_xid12(), idgen.gen_xid12(timestamptz), idgen.gen_snowflake(),"
    " idgen.rapkey_next(text) TO {r}",
]


def check(ok: bool, what: str) -> None:
    global checks
    checks += 1
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def outcome(conn, sql, params=()):
    """('ok', value) or ('error', sqlstate, message)."""
    try:
        with conn.transaction():
            cur = conn.execute(sql, params)
            row = cur.fetchone() if cur.description else (None,)
        return ("ok", row[0])
    except psycopg.Error as e:
        return ("error", e.diag.sqlstate, e.diag.message_primary)


def connect(dsn):
    return psycopg.connect(dsn, autocommit=True)


def ids(conn, f, n):
    return conn.execute(f"SELECT array_agg(idgen.{f}()::text) FROM generate_series(1, %s)", (n,)).fetchone()[0]


def forged_epoch(p, w):
    """A writer sets the epoch earlier versions cached (idgen_portable.sf_epoch) so that its ids'
    milliseconds land on those of another session's ids, taken just before: none is equal."""
    epoch = p.execute("SELECT snowflake_epoch FROM idgen.idgen_config").fetchone()[0]
    honest = p.execute(
        "SELECT array_agg(id), min(id >> 22) FROM (SELECT idgen.gen_snowflake() AS id FROM generate_series(1, 20000)) g"
    ).fetchone()
    now = w.execute("SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint").fetchone()[0]
    forged_epoch = epoch + (now - (honest[1] + epoch))
    w.execute("SELECT set_config('idgen_portable.sf_epoch', %s, false)", (str(forged_epoch),))
    w.execute("SELECT set_config('idgen_portable.sf_worker', %s, false)",
              (str(p.execute("SELECT worker_id::bigint << 12 FROM idgen.idgen_config").fetchone()[0]),))
    forged = w.execute("SELECT array_agg(idgen.gen_snowflake()) FROM generate_series(1, 20000)").fetchone()[0]
    same = len(set(honest[0]) & set(forged))
    check(same == 0, f"forged sf_epoch: {same} of 20000 Snowflake ids equal to another session's")
    w.execute("RESET ALL")
    print(f"forged_epoch: {same} of 20000 ids equal to another session's")


def forged_xid12_cache(p, w):
    """A writer sets the xid12 text earlier versions cached (idgen_portable.xid12_head, keyed by
    xid12_key: the first 17 characters, for a block of 2048 counter values) to that of a block
    another session's ids filled, keyed for its own next values (the rest of their block): none
    of its ids is equal."""
    honest = ids(p, "gen_xid12", 6000)
    x = w.execute("SELECT idgen.gen_xid12()::text").fetchone()[0]
    v = w.execute(
        "SELECT (extract(epoch FROM idgen.xid12_time(%s))::bigint << 24) | idgen.xid12_counter(%s)", (x, x)
    ).fetchone()[0]
    w.execute("SELECT set_config('idgen_portable.xid12_key', %s, false)", (str((v + 1) >> 11),))
    w.execute("SELECT set_config('idgen_portable.xid12_head', %s, false)", (honest[3000][:17],))
    forged = ids(w, "gen_xid12", 4500)
    same = len(set(honest) & set(forged))
    check(same == 0, f"forged xid12 cache: {same} of 4500 xid12 ids equal to another session's")
    w.execute("RESET ALL")
    print(f"forged_xid12_cache: {same} of 4500 ids equal to another session's")


def forged_fields(p, w):
    """Provenance: whatever a writer sets (the settings earlier versions cached; TimeZone and
    DateStyle, which the derived machine id's text once depended on), its ids carry the
    configured worker id, this database's machine id and its own backend's pid."""
    worker, machine_set = p.execute("SELECT worker_id, machine_id IS NOT NULL FROM idgen.idgen_config").fetchone()
    machine = p.execute("SELECT idgen.xid12_machine(idgen.gen_xid12())").fetchone()[0]
    epoch = p.execute("SELECT snowflake_epoch FROM idgen.idgen_config").fetchone()[0]
    for name, value in (("sf_worker", str(((worker + 1) % 1024) << 12)), ("sf_epoch", str(epoch)), ("machine", "11259375"),
                        ("xid12_mp", str((0xABCDEF << 16) | 0x1234)), ("xid12_key", ""), ("TimeZone", "Pacific/Chatham"),
                        ("DateStyle", "SQL, DMY")):
        w.execute("SELECT set_config(%s, %s, false)", (name if name[0].isupper() else "idgen_portable." + name, value))
    got = w.execute(
        "WITH g AS (SELECT idgen.gen_snowflake() AS sf, idgen.gen_xid12() AS x, idgen.gen_xid12(now()) AS b)"
        " SELECT idgen.snowflake_worker(sf), idgen.xid12_machine(x), idgen.xid12_pid(x), pg_backend_pid() & 65535,"
        " idgen.xid12_machine(b) FROM g"
    ).fetchone()
    check(got[0] == worker, f"forged sf_worker: the id names worker {got[0]}, not the configured {worker}")
    check(got[1] == machine and got[4] == machine,
          f"forged machine (set: {machine_set}): ids carry {got[1]!r}, {got[4]!r}, not this database's {machine!r}")
    check(got[2] == got[3], f"forged pid: the id carries {got[2]}, the backend's is {got[3]}")
    w.execute("RESET ALL")
    print(f"forged_fields: worker {got[0]}, machine {got[1].hex()}, pid {got[2]} (the configured and the session's own)")


def stranger_locks(p, sdsn):
    """A role with CONNECT only holds every lock it can take on the edition: advisory locks on
    the keys earlier versions used (the oid of every relation of the schema, exclusively), and
    ROW EXCLUSIVE on every relation of the schema (a sequence function's lock, taken before its
    checks and kept when its error is caught). With them held (seen in pg_locks) and the
    sequences behind the clock (so the gates jump), every generator answers: none waits for a
    lock of the stranger's (which would end it with 55P03 within the jump's 2 s lock_timeout)."""
    s = connect(sdsn)
    spid = s.execute("SELECT pg_backend_pid()").fetchone()[0]
    usage = s.execute("SELECT has_schema_privilege('idgen', 'USAGE')").fetchone()[0]
    check(not usage, "the stranger has USAGE on the schema")
    oids = [r[0] for r in s.execute(
        "SELECT c.oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'idgen'")]
    for oid in oids:
        s.execute("SELECT pg_advisory_lock(1885956452, %s)", (oid,))
    s.execute("BEGIN")
    for oid in oids:
        s.execute("SAVEPOINT a")
        try:
            s.execute("SELECT nextval(%s::oid::regclass)", (oid,))
        except psycopg.Error:
            pass
        s.execute("ROLLBACK TO SAVEPOINT a")
    held = p.execute(
        "SELECT count(*) FILTER (WHERE locktype = 'advisory' AND granted),"
        " count(*) FILTER (WHERE locktype = 'relation' AND granted AND relation IN"
        " ('idgen.idgen_xid12_seq'::regclass, 'idgen.idgen_snowflake_seq'::regclass, 'idgen.idgen_xid12_backfill_seq'::regclass))"
        " FROM pg_locks WHERE pid = %s", (spid,)).fetchone()
    check(held[0] == len(oids) and held[1] == 3, f"the stranger holds {held} of its locks ({len(oids)} relations)")
    # The sequences behind the clock: wait for the next second (the xid12 gate jumps then).
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline and not p.execute(
            "SELECT (SELECT last_value FROM idgen.idgen_xid12_seq) >> 24 < floor(extract(epoch FROM clock_timestamp()))"
            " AND (SELECT last_value FROM idgen.idgen_snowflake_seq) >> 12 < floor(extract(epoch FROM clock_timestamp()) * 1000)"
    ).fetchone()[0]:
        time.sleep(0.05)
    # Bound by what blocks, not by the machine's speed: a gate that waited for the stranger's
    # lock would end with 55P03 at its jump's lock_timeout (2 s, 15_sequence.sql); the 30 s
    # statement_timeout only ends a call that hangs some other way.
    p.execute("SET statement_timeout = 30000")
    got, slowest = [], 0.0
    for f in ("gen_xid12()", "gen_snowflake()", "gen_xid12(now())") * 3:
        started = time.monotonic()
        got.append(outcome(p, f"SELECT idgen.{f}::text"))
        slowest = max(slowest, time.monotonic() - started)
    p.execute("RESET statement_timeout")
    check(all(g[0] == "ok" for g in got), f"generators beside the stranger's locks: {[g for g in got if g[0] != 'ok'][:2]}")
    s.execute("ROLLBACK")
    s.close()
    print(f"stranger_locks: {held[0]} advisory and {held[1]} sequence locks held by a CONNECT-only role;"
          f" {sum(g[0] == 'ok' for g in got)} of {len(got)} generator calls answered (the slowest in {slowest:.3f} s)")


def backfill_counter_end(p, w):
    """gen_xid12(timestamptz)'s counter never wraps: at its end (the owner sets the sequence
    there, as the calls of a writer that spent it would) the call fails, 2200H, rather than
    give an id it gave before."""
    seq = "idgen.idgen_xid12_backfill_seq"
    top = p.execute("SELECT max_value FROM pg_sequences WHERE schemaname = 'idgen' AND sequencename = 'idgen_xid12_backfill_seq'").fetchone()[0]
    p.execute(f"SELECT setval('{seq}', 0, false)")
    first = outcome(w, "SELECT idgen.gen_xid12('2001-02-03 04:05:06+00')::text")
    p.execute(f"SELECT setval('{seq}', %s, true)", (top - 1,))
    last = outcome(w, "SELECT idgen.gen_xid12('2001-02-03 04:05:06+00')::text")
    after = [outcome(w, "SELECT idgen.gen_xid12('2001-02-03 04:05:06+00')::text") for _ in range(2)]
    seen = [first, last] + after
    repeated = [g for g in after if g[0] == "ok" and g[1] in (first[1], last[1])]
    check(first[0] == "ok" and last[0] == "ok" and not repeated and all(g[:2] == ("error", "2200H") for g in after),
          f"backfill counter at its end ({top}): {seen}")
    p.execute(f"SELECT setval('{seq}', 1, true)")  # the other tests backfill on
    print(f"backfill_counter_end: counter end {top}: {after[0][:2]}")


def progress_locks(w):
    """idgen_backfill_progress (sql/backfill.sql) is written by idgen_backfill only, each role its
    own rows: a writer (USAGE on the schema) may not LOCK TABLE it in a mode that stops a run
    (SHARE and stronger: every run's INSERT and UPDATE wait), nor delete its rows, nor change
    their keys (it could before: UPDATE and DELETE on the table were PUBLIC's)."""
    got = {sql: outcome(w, sql) for sql in (
        "LOCK TABLE idgen.idgen_backfill_progress",
        "LOCK TABLE idgen.idgen_backfill_progress IN SHARE MODE",
        "LOCK TABLE idgen.idgen_backfill_progress IN SHARE UPDATE EXCLUSIVE MODE",
        "LOCK TABLE idgen.idgen_backfill_progress IN EXCLUSIVE MODE",
        "DELETE FROM idgen.idgen_backfill_progress",
        "UPDATE idgen.idgen_backfill_progress SET run_by = 'x'",
        "TRUNCATE idgen.idgen_backfill_progress",
    )}
    allowed = {sql: g for sql, g in got.items() if g[:2] != ("error", "42501")}
    check(not allowed, f"idgen_backfill_progress: a writer ran {allowed}")
    print(f"progress_locks: {len(got) - len(allowed)} of {len(got)} refused (42501)")


def main():
    p = connect(sys.argv[1])
    wdsn = os.environ["PORTABLE_WRITER_DSN"]
    for sql in WRITER_GRANTS:
        p.execute(sql.format(r="idgen_writer"))
    if p.execute("SELECT worker_id IS NULL FROM idgen.idgen_config").fetchone()[0]:
        p.execute("UPDATE idgen.idgen_config SET worker_id = 5")
        p.execute("SELECT idgen.idgen_config_reload()")
    w = connect(wdsn)
    forged_epoch(p, w)
    forged_xid12_cache(p, w)
    forged_fields(p, w)
    sdsn = os.environ.get("PORTABLE_STRANGER_DSN")
    if sdsn:
        stranger_locks(p, sdsn)
    else:
        print("PORTABLE_STRANGER_DSN not set: stranger_locks skipped")
    backfill_counter_end(p, w)
    progress_locks(w)
    w.close()
    print(f"{checks} checks, {len(failures)} failures")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
