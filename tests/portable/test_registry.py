"""The writer registry of pg_idgen's portable edition: sql/registry.sql as portable/build.py
includes it (portable/README.md "The writer registry"). Run by tests/portable/run.sh (plain
script, every phase) and tests/portable/run_tle.sh (pg_tle, phase main):

    python test_registry.py PHASE OWNER_DSN

OWNER_DSN: the database where the role that owns it (no superuser) installed the edition into
schema idgen; the tests connect with an empty search_path. Environment: PORTABLE_WRITER_DSN and
PORTABLE_OTHER_DSN, the same database as two roles with no rights of their own (the tests give
them what README.md tells a DBA to give writers); PORTABLE_SUPER_DSN, the same database as a
superuser (to refuse and give back the WAL functions, as a service may, and to copy a database);
PORTABLE_NATIVE_DSN, a database with the native extension (optional: comparisons);
PORTABLE_BINDIR, PostgreSQL's bin directory (pg_dump, for the restore of a plain dump).

Phases, in run.sh's order (each leaves what the next expects):
  main         grants of both kinds, the roles (a writer only touches its own grants, another
               role nothing), concurrency, provenance (idgen_writer_of, idgen_verify, the native
               decoding), forged settings, planted functions, the Python client; the origin
               check while the WAL functions work, after a dump restored and a database copied,
               and with the WAL functions refused (they stay refused for the next phase)
  crashed      after a crash (pg_ctl stop -m immediate), WAL refused: the empty marker fences
               (Snowflake waits, xid12 takes a new stripe at once); the owner lifts it; the WAL
               functions are given back
  crashed-wal  after a crash, WAL readable: no change of origin (as native)
  promoted     on a standby of that cluster, promoted: a new timeline fences, as native
"""

import os
import pathlib
import subprocess
import sys
import threading

import psycopg
from psycopg.conninfo import make_conninfo

ROOT = pathlib.Path(__file__).resolve().parents[2]
failures: list[str] = []
checks = 0
WAL = "pg_current_wal_lsn(), pg_walfile_name(pg_lsn)"
CONTROL = "pg_control_system(), pg_control_checkpoint()"


def check(ok: bool, what: str) -> None:
    global checks
    checks += 1
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def outcome(conn, sql, params=()):
    """('ok', first column of the first row) or ('error', sqlstate, message)."""
    try:
        with conn.transaction():
            row = conn.execute(sql, params).fetchone()
        return ("ok", row[0] if row else None)
    except psycopg.Error as e:
        return ("error", e.diag.sqlstate, e.diag.message_primary)


def run(argv, stdin=None) -> str:
    done = subprocess.run(argv, input=stdin, capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"{argv[0]} failed: {done.stderr}")
    return done.stdout


def connect(dsn):
    return psycopg.connect(dsn, autocommit=True)


def one(conn, sql, params=()):
    return conn.execute(sql, params).fetchone()


def acquire(conn, kind, writer, lease=None, pool="app"):
    """The grant row as a dict."""
    cur = conn.execute(
        "SELECT * FROM idgen.idgen_acquire(%s, %s, %s::interval, %s)",
        (kind, writer, lease, pool),
    )
    return dict(zip([d.name for d in cur.description], cur.fetchone()))


def origin_rows(p):
    return p.execute(
        "SELECT system_identifier, timeline, fenced, reason, xid12_stripe"
        " FROM idgen.idgen_registry_origin ORDER BY seen_at, reason IS NOT NULL"
    ).fetchall()


# --- main ---------------------------------------------------------------------------------


def grants_and_roles(p, w, o):
    """Both kinds; a writer's grants are its own; another role can do nothing."""
    # The server's own worker id (test_portable.py set one; else 5) and machine id.
    p.execute("UPDATE idgen.idgen_config SET worker_id = coalesce(worker_id, 5)")
    worker = one(p, "SELECT worker_id FROM idgen.idgen_config")[0]
    p.execute("SELECT idgen.idgen_pool_allow('app', 'idgen_writer', 64)")
    p.execute("GRANT USAGE ON SCHEMA idgen TO idgen_writer, idgen_other")
    p.execute("GRANT SELECT ON idgen.idgen_grants TO idgen_writer")
    got = {}
    for kind in ("snowflake", "xid12"):
        g = acquire(w, kind, f"w-{kind}", "1 minute")
        got[kind] = g
        check(
            g["kind"] == kind and g["token"] is not None and g["lo_t"] < g["hi_t"],
            f"acquire {kind}: {g}",
        )
        row = one(
            p,
            "SELECT writer, db_role, pool, reserved FROM idgen.idgen_grants WHERE grant_id = %s",
            (g["grant_id"],),
        )
        check(
            tuple(row) == (f"w-{kind}", "idgen_writer", "app", False),
            f"{kind} grant's row: {row}",
        )
    sf, x = got["snowflake"], got["xid12"]
    check(
        sf["epoch_ms"] == 1288834974657 and x["epoch_ms"] is None,
        f"epochs: {sf['epoch_ms']}, {x['epoch_ms']}",
    )
    # The server's own slots are reserved at the first acquire of each kind, from
    # idgen_config, never granted.
    own = p.execute(
        "SELECT kind, slot, writer FROM idgen.idgen_grants WHERE reserved ORDER BY kind"
    ).fetchall()
    machine = one(p, "SELECT idgen.idgen_config_machine()")[0]
    check(
        own
        == [
            ("snowflake", worker, "this server (idgen_config.worker_id)"),
            ("xid12", machine, "this server (its xid12 machine id)"),
        ],
        f"the server's own slots reserved: {own}, machine {machine}",
    )
    # Another role: no EXECUTE, no rights on the tables.
    for sql in (
        "SELECT idgen.idgen_acquire('snowflake', 'o')",
        f"SELECT idgen.idgen_renew({sf['grant_id']}, {sf['token']})",
        f"SELECT idgen.idgen_release({sf['grant_id']}, {sf['token']})",
        "SELECT * FROM idgen.idgen_grants",
        "SELECT * FROM idgen.idgen_registry_grant",
    ):
        got_o = outcome(o, sql)
        check(got_o[:2] == ("error", "42501"), f"idgen_other: {sql}: {got_o}")
    # A second writer role in the pool: the first cannot renew, release or report on its grant.
    p.execute("SELECT idgen.idgen_pool_allow('app', 'idgen_other', 2)")
    og = acquire(o, "snowflake", "o-1", "1 minute")
    for sql in (
        "SELECT grant_id FROM idgen.idgen_renew(%s, %s)",
        "SELECT grant_id FROM idgen.idgen_release(%s, %s)",
        "SELECT idgen.idgen_report(%s, %s, 'dev', 0)",
    ):
        got_w = outcome(w, sql, (og["grant_id"], og["token"]))
        check(
            got_w
            == (
                "error",
                "42501",
                f"grant {og['grant_id']} belongs to role idgen_other",
            ),
            f"writer on idgen_other's grant: {sql}: {got_w}",
        )
    for sql, want in (
        (
            f"SELECT grant_id FROM idgen.idgen_renew({sf['grant_id']}, 1)",
            ("error", "42501", f"wrong token for grant {sf['grant_id']}"),
        ),
        (
            "SELECT grant_id FROM idgen.idgen_renew(999999999, 1)",
            ("error", "42704", "grant 999999999 does not exist"),
        ),
    ):
        check(outcome(w, sql) == want, f"{sql}: {outcome(w, sql)}")
    # Its own grant: renewed (hi moves on), released (the rest of the window freed).
    r = one(
        o, "SELECT hi_t FROM idgen.idgen_renew(%s, %s)", (og["grant_id"], og["token"])
    )
    check(r[0] >= og["hi_t"], f"renew of its own grant: {r[0]} < {og['hi_t']}")
    rel = one(
        o,
        "SELECT hi_t FROM idgen.idgen_release(%s, %s, '-infinity')",
        (og["grant_id"], og["token"]),
    )
    check(
        rel[0] == og["lo_t"], f"release, no id made: hi_t {rel[0]} != lo_t {og['lo_t']}"
    )
    p.execute("SELECT idgen.idgen_pool_disallow('app', 'idgen_other')")
    got_o = outcome(o, "SELECT idgen.idgen_acquire('snowflake', 'o')")
    check(got_o[:2] == ("error", "42501"), f"disallowed idgen_other acquires: {got_o}")
    # The writer's direct changes and the DBA's functions: refused.
    refused = []
    for sql in (
        "UPDATE idgen.idgen_registry_grant SET hi = lo",
        "DELETE FROM idgen.idgen_registry_slot",
        "INSERT INTO idgen.idgen_registry_origin VALUES (1, 1, now(), false, 'forged')",
        "UPDATE idgen.idgen_registry_site SET database_oid = 0",
        "DELETE FROM idgen.idgen_registry_marker",
        "INSERT INTO idgen.idgen_registry_pool_role VALUES ('edge', 'idgen_writer', 1000)",
        "SELECT setval('idgen.idgen_registry_noticed_ms', 9000000000000)",
        "SELECT nextval('idgen.idgen_registry_grant_id_seq')",
        "UPDATE idgen.idgen_config SET worker_id = 7",
        "SELECT idgen.idgen_reserve('snowflake', 9, 'mine')",
        "SELECT idgen.idgen_pool_allow('edge', 'idgen_writer', 1000)",
        "SELECT idgen.idgen_registry_lift_fence()",
        "SELECT idgen.idgen_registry_check_origin()",
        "SELECT idgen.idgen_registry_mark_site()",
        "SELECT idgen.idgen_registry_site_change(false)",
        "SELECT idgen.idgen_registry_timeline()",
        "SELECT idgen.idgen_registry_epoch()",
    ):
        got_w = outcome(w, sql)
        if got_w[:2] == ("error", "42501"):
            refused.append(sql)
        else:
            check(False, f"writer: {sql}: {got_w}")
    print(
        f"grants: both kinds as idgen_writer; idgen_other refused 5 calls, its grant safe from "
        f"the writer (renew, release, report: 42501); the writer refused {len(refused)} direct "
        f"changes and DBA functions"
    )
    return sf, x


def concurrent_acquires(w_dsn, p):
    """Sessions acquiring at once: no two live grants of a kind share a slot."""
    out, errors = [], []

    def work(i):
        try:
            with connect(w_dsn) as c:
                for k in range(6):
                    for kind in ("snowflake", "xid12"):
                        out.append(acquire(c, kind, f"c{i}-{k}", "1 minute"))
        except Exception as e:  # noqa: BLE001 - reported as a failure
            errors.append(repr(e))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    check(not errors, f"concurrent acquires failed: {errors[:3]}")
    for kind in ("snowflake", "xid12"):
        slots = [g["slot"] for g in out if g["kind"] == kind]
        check(
            len(slots) == 24 and len(set(slots)) == 24, f"{kind}: slots {sorted(slots)}"
        )
    overlap = one(
        p,
        "SELECT count(*) FROM idgen.idgen_registry_grant a JOIN idgen.idgen_registry_grant b"
        " ON a.kind = b.kind AND a.slot = b.slot AND a.grant_id < b.grant_id"
        " AND a.lo < b.hi AND b.lo < a.hi",
    )[0]
    check(overlap == 0, f"{overlap} pairs of windows of one slot overlap")
    print(
        "concurrency: 4 sessions x 6 acquires of each kind: 24 distinct slots each, no windows overlap"
    )


def forged_settings(p, w):
    """Settings a role can set for itself do not reach the registry: the epoch, the worker id
    and the machine id come from idgen_config."""
    before = one(p, "SELECT count(*) FROM idgen.idgen_registry_grant WHERE reserved")[0]
    # Placeholders any role may set, unless the native library is preloaded in this cluster
    # (run.sh preloads it for the comparisons): then its own settings refuse a writer.
    forged = []
    for name, value in (
        ("pg_idgen.snowflake_epoch", "0"),
        ("pg_idgen.worker_id", "9"),
        ("idgen_portable.machine", "4242"),
        ("idgen_portable.sf_epoch", "0"),
    ):
        if outcome(w, "SELECT set_config(%s, %s, false)", (name, value))[0] == "ok":
            forged.append(name)
    check("idgen_portable.machine" in forged, f"forged: {forged}")
    g = acquire(w, "snowflake", "forger", "1 minute")
    check(
        g["epoch_ms"] == 1288834974657,
        f"forged epoch reached the grant: {g['epoch_ms']}",
    )
    acquire(w, "xid12", "forger", "1 minute")
    after = one(p, "SELECT count(*) FROM idgen.idgen_registry_grant WHERE reserved")[0]
    check(after == before, f"forged settings made reservations: {before} -> {after}")
    w.execute("RESET ALL")
    # The owner's epoch, changed after Snowflake grants: IG005, in this edition's words.
    p.execute("UPDATE idgen.idgen_config SET snowflake_epoch = 0")
    got = outcome(w, "SELECT slot FROM idgen.idgen_acquire('snowflake', 'epoch')")
    check(
        got
        == (
            "error",
            "IG005",
            "the registry's Snowflake grants use the epoch 1288834974657, and "
            "idgen_config.snowflake_epoch is now 0",
        ),
        f"acquire after the epoch changed: {got}",
    )
    p.execute("UPDATE idgen.idgen_config SET snowflake_epoch = DEFAULT")
    print(
        f"forged settings ({', '.join(forged)}): the grant's epoch and the reservations unchanged"
    )


# Functions named like built-ins the registry's gates call (name, arguments, result), planted by
# a writer: each records that it ran, as whom, and fails.
PLANTED = [
    ("clock_timestamp", "", "timestamptz"),
    ("gen_random_uuid", "", "uuid"),
    ("sha256", "bytea", "bytea"),
    ("int8send", "bigint", "bytea"),
    ("current_setting", "text", "text"),
    ("current_setting", "text, boolean", "text"),
    ("set_config", "text, text, boolean", "text"),
    ("pg_control_system", "", "record"),
    ("pg_control_checkpoint", "", "record"),
    ("pg_current_wal_lsn", "", "pg_lsn"),
    ("pg_walfile_name", "pg_lsn", "text"),
    ("random", "", "double precision"),
    ("nextval", "regclass", "bigint"),
    ("setval", "regclass, bigint", "bigint"),
    ("quote_literal", "text", "text"),
    ("pg_has_role", "name, oid, text", "boolean"),
]


def planted(p, w):
    """Functions and an operator named like those the registry's gates call, in a schema first
    on the writer's search_path: none runs."""
    db = one(p, "SELECT current_database()")[0]
    p.execute(f'GRANT CREATE ON DATABASE "{db}" TO idgen_writer')
    w.execute("DROP SCHEMA IF EXISTS hostile CASCADE")
    w.execute("CREATE SCHEMA hostile")
    w.execute("CREATE TABLE hostile.ran (what text, who name)")
    w.execute("GRANT USAGE ON SCHEMA hostile TO PUBLIC")
    w.execute("GRANT INSERT, SELECT ON hostile.ran TO PUBLIC")
    for name, args, result in PLANTED:
        w.execute(
            f"CREATE FUNCTION hostile.{name}({args}) RETURNS {result} LANGUAGE plpgsql AS $$"
            f" BEGIN INSERT INTO hostile.ran VALUES ('{name}', current_user); RAISE EXCEPTION"
            f" 'planted hostile.{name} ran as %', current_user; END $$"
        )
    w.execute(
        "CREATE FUNCTION hostile.eq(text, text) RETURNS boolean LANGUAGE plpgsql AS $$ BEGIN"
        " INSERT INTO hostile.ran VALUES ('=', current_user); RETURN $1 OPERATOR(pg_catalog.=) $2; END $$"
    )
    w.execute(
        "CREATE OPERATOR hostile.= (LEFTARG = text, RIGHTARG = text, FUNCTION = hostile.eq)"
    )
    w.execute("SET search_path = hostile, pg_catalog")
    g = acquire(w, "snowflake", "planted", "1 minute")
    x = acquire(w, "xid12", "planted", "1 minute")
    w.execute("SELECT * FROM idgen.idgen_renew(%s, %s)", (g["grant_id"], g["token"]))
    w.execute("SELECT * FROM idgen.idgen_release(%s, %s)", (x["grant_id"], x["token"]))
    w.execute(
        "SELECT idgen.idgen_report(%s, %s, 'dev', 0)", (g["grant_id"], g["token"])
    )
    w.execute("RESET search_path")
    ran = p.execute("SELECT what, who FROM hostile.ran").fetchall()
    check(not ran, f"planted functions ran: {ran}")
    w.execute("DROP SCHEMA hostile CASCADE")
    p.execute(f'REVOKE CREATE ON DATABASE "{db}" FROM idgen_writer')
    print(
        f"planted: {len(PLANTED)} functions and an operator first on the writer's search_path; "
        f"acquire, renew, release and report ran none"
    )


def provenance(p, w, o, n, sf, x):
    """idgen_writer_of and idgen_verify on Snowflake ids and portable xid12 ids."""
    sid = ((sf["lo_t"] + 1) << 22) | (sf["slot"] << 12) | 7
    xid = one(
        p,
        "SELECT idgen.xid12_from_parts(to_timestamp(%s), substr(int4send(%s), 2, 3), 77, 5)::text",
        (x["lo_t"] + 1, x["slot"]),
    )[0]
    for conn, who in ((p, "owner"), (w, "writer")):
        got = one(
            conn,
            "SELECT writer, grant_id FROM idgen.idgen_writer_of(%s::bigint)",
            (sid,),
        )
        check(
            tuple(got or ()) == ("w-snowflake", sf["grant_id"]),
            f"{who}: writer_of({sid}): {got}",
        )
        got = one(
            conn,
            "SELECT writer, grant_id FROM idgen.idgen_writer_of(%s::idgen.xid12)",
            (xid,),
        )
        check(
            tuple(got or ()) == ("w-xid12", x["grant_id"]),
            f"{who}: writer_of({xid}): {got}",
        )
    got = outcome(o, "SELECT writer FROM idgen.idgen_writer_of(%s::bigint)", (sid,))
    check(got[:2] == ("error", "42501"), f"idgen_other reads idgen_writer_of: {got}")
    outside = ((sf["lo_t"] - 100000) << 22) | (sf["slot"] << 12)
    check(
        one(p, "SELECT count(*) FROM idgen.idgen_writer_of(%s::bigint)", (outside,))[0]
        == 0,
        "writer_of an id before the window",
    )
    # idgen_verify: ids inside windows pass; the rest come back with the reason.
    p.execute("DROP SCHEMA IF EXISTS regcheck CASCADE")
    p.execute("CREATE SCHEMA regcheck")
    p.execute("CREATE TABLE regcheck.ids (sf bigint, x idgen.xid12, t text)")
    never_x = one(
        p,
        "SELECT idgen.xid12_from_parts(to_timestamp(%s), '\\xffffff'::bytea, 1, 1)::text",
        (x["lo_t"] + 1,),
    )[0]
    rows = [
        (sid, xid),
        (outside, never_x),
        (((sf["lo_t"] + 1) << 22) | (1023 << 12), None),
        (-5, None),
    ]
    with p.cursor() as c:
        c.executemany("INSERT INTO regcheck.ids (sf, x) VALUES (%s, %s)", rows)
    sfv = p.execute(
        "SELECT id, reason FROM idgen.idgen_verify('regcheck.ids', 'sf') ORDER BY id"
    ).fetchall()
    xv = p.execute(
        "SELECT id, reason FROM idgen.idgen_verify('regcheck.ids', 'x') ORDER BY id"
    ).fetchall()
    reasons = {r for _, r in sfv}
    check(len(sfv) == 3 and str(sid) not in [i for i, _ in sfv], f"verify sf: {sfv}")
    check(
        any(r.endswith("it is outside every window of that slot") for r in reasons)
        and any(
            r.startswith("worker 1023 at ")
            and r.endswith("that slot was never granted or reserved")
            for r in reasons
        )
        and "a negative bigint is not a Snowflake id" in reasons,
        f"verify sf reasons: {reasons}",
    )
    check(
        sorted(i for i, _ in xv if i) == [never_x]
        and any(r.startswith("machine 16777215 at ") for _, r in xv)
        and sum(1 for i, r in xv if i is None and r == "the id is NULL") == 2,
        f"verify x: {xv}",
    )
    got = outcome(p, "SELECT count(*) FROM idgen.idgen_verify('regcheck.ids', 't')")
    check(got[:2] == ("error", "42804"), f"verify of a text column: {got}")
    p.execute("DROP SCHEMA regcheck CASCADE")
    # The native decoding of the same ids: the packed point of each (docs/formats.md §8).
    if n:
        ids = [
            r[0]
            for r in p.execute(
                "SELECT idgen.gen_xid12()::text FROM generate_series(1, 20)"
            )
        ]
        ids += [xid, never_x, "00000000000000000000", "vvvvvvvvvvvvvvvvvvvg"]
        for i in ids:
            a = one(p, "SELECT idgen.idgen_registry_point(%s::idgen.xid12)", (i,))[0]
            b = one(n, "SELECT idgen_registry_point(%s::xid12)", (i,))[0]
            check(a == b, f"point({i}): portable {a}, native {b}")
        for s in (sid, outside, 0, 2**63 - 1, -1):
            a = one(p, "SELECT idgen.idgen_registry_point(%s::bigint)", (s,))[0]
            b = one(n, "SELECT idgen_registry_point(%s::bigint)", (s,))[0]
            check(a == b, f"point({s}): portable {a}, native {b}")
    print(
        "provenance: idgen_writer_of and idgen_verify on Snowflake and xid12 ids"
        + (", the packed point equal to native's for 29 ids" if n else "")
    )


def python_client(w_dsn, p):
    """The Python client's Registry against this edition: ids of its grants name its writer."""
    sys.path.insert(0, str(ROOT / "clients" / "python" / "src"))
    from pg_idgen import Registry

    with Registry(w_dsn, writer="py-client") as reg:
        sf = reg.snowflake().next_id()
        x = str(reg.xid12().new())
        for sql, i in (
            ("SELECT writer FROM idgen.idgen_writer_of(%s::bigint)", sf),
            ("SELECT writer FROM idgen.idgen_writer_of(%s::idgen.xid12)", x),
        ):
            got = one(p, sql, (i,))
            check(tuple(got or ()) == ("py-client",), f"python client's id {i}: {got}")
    print(
        f"python client: Registry's snowflake {sf} and xid12 {x} come from its grants"
    )


def origin_normal(p):
    """While the WAL functions work: the origin is native's; an emptied marker (a crash here)
    changes nothing, as native."""
    rows = origin_rows(p)
    sysid = one(p, "SELECT system_identifier FROM pg_control_system()")[0]
    check(
        len(rows) == 1 and rows[0][:4] == (sysid, 1, False, None),
        f"origin at install: {rows}",
    )
    check(
        one(p, "SELECT idgen.idgen_registry_check_origin()")[0] is None,
        "a fence at install",
    )
    p.execute("TRUNCATE idgen.idgen_registry_marker")
    check(
        one(p, "SELECT idgen.idgen_registry_check_origin()")[0] is None,
        "fenced: marker gone, WAL readable",
    )
    check(len(origin_rows(p)) == 1, f"origin rows: {origin_rows(p)}")
    check(
        one(p, "SELECT count(*) FROM idgen.idgen_registry_marker")[0] == 1,
        "marker not rewritten",
    )


def restored_dump(p, s, owner_dsn, w_dsn, bindir):
    """A plain dump restored into another database, then that database copied: both are new
    origins (other oids), fenced; xid12 gets a new stripe at once, Snowflake waits."""
    s.execute("DROP DATABASE IF EXISTS reg_restored")
    s.execute("DROP DATABASE IF EXISTS reg_copy")
    s.execute("CREATE DATABASE reg_restored OWNER idgen_owner")
    dump = run([f"{bindir}/pg_dump", "-d", owner_dsn, "-n", "idgen"])
    run(
        [
            f"{bindir}/psql",
            "-X",
            "-q",
            "-v",
            "ON_ERROR_STOP=1",
            "-d",
            make_conninfo(owner_dsn, dbname="reg_restored"),
        ],
        dump,
    )
    old_stripe = one(p, "SELECT idgen.idgen_registry_current_stripe()")[0]
    stripes = {}
    for name in ("reg_restored", "reg_copy"):
        if name == "reg_copy":
            s.execute(
                "CREATE DATABASE reg_copy TEMPLATE reg_restored OWNER idgen_owner"
            )
        with connect(make_conninfo(owner_dsn, dbname=name)) as r:
            fenced = one(r, "SELECT idgen.idgen_registry_check_origin()")[0]
            last = origin_rows(r)[-1]
            check(
                fenced is not None
                and last[2]
                and last[3].startswith(
                    "restored from a dump or copied into another database"
                ),
                f"{name}: {last}",
            )
            stripes[name] = last[4]
        with connect(make_conninfo(w_dsn, dbname=name)) as rw:
            got = outcome(
                rw, "SELECT slot FROM idgen.idgen_acquire('snowflake', 'after-restore')"
            )
            check(got[:2] == ("error", "IG001"), f"{name}: snowflake acquire: {got}")
            got = outcome(
                rw, "SELECT slot FROM idgen.idgen_acquire('xid12', 'after-restore')"
            )
            check(
                got[0] == "ok" and got[1] % 64 == stripes[name],
                f"{name}: xid12 acquire: {got} (stripe {stripes[name]})",
            )
        if name == "reg_restored":
            s.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'reg_restored'"
            )
    check(
        len({old_stripe, *stripes.values()}) == 3,
        f"stripes: {old_stripe} then {stripes}",
    )
    s.execute("DROP DATABASE reg_copy")
    s.execute("DROP DATABASE reg_restored WITH (FORCE)")
    print(
        f"origin: a plain dump restored into another database and that one copied: both fenced "
        f"(Snowflake IG001), xid12 granted at once from new stripes {list(stripes.values())} (was {old_stripe})"
    )


def origin_refused(p, s, w):
    """The WAL functions refused to the owner (as Aurora refuses pg_current_wal_lsn): with the
    marker there, no change; the registry works."""
    s.execute(f"REVOKE EXECUTE ON FUNCTION {WAL} FROM PUBLIC")
    got = outcome(p, "SELECT pg_current_wal_lsn()")
    check(got[:2] == ("error", "42501"), f"the owner still reads the WAL: {got}")
    rows = len(origin_rows(p))
    check(
        one(p, "SELECT idgen.idgen_registry_wal_timeline()")[0] is None
        and one(p, "SELECT idgen.idgen_registry_timeline()")[0] == 1
        and one(p, "SELECT idgen.idgen_registry_check_origin()")[0] is None,
        "WAL refused, marker there: not the recorded timeline, or fenced",
    )
    check(
        len(origin_rows(p)) == rows, f"WAL refused: a change recorded: {origin_rows(p)}"
    )
    g = acquire(w, "snowflake", "refused", "1 minute")
    check(g["slot"] is not None, "acquire with the WAL refused")
    print(
        "origin: WAL functions refused to the owner, marker there: no change, grants as before"
    )


def main_phase(p, dsn):
    w_dsn = os.environ["PORTABLE_WRITER_DSN"]
    o_dsn = os.environ["PORTABLE_OTHER_DSN"]
    s_dsn = os.environ.get("PORTABLE_SUPER_DSN")
    n_dsn = os.environ.get("PORTABLE_NATIVE_DSN")
    bindir = os.environ.get("PORTABLE_BINDIR")
    w, o = connect(w_dsn), connect(o_dsn)
    n = connect(n_dsn) if n_dsn else None
    tle = one(p, "SELECT count(*) FROM pg_extension WHERE extname = 'pg_idgen'")[0] == 1
    origin_normal(p)
    sf, x = grants_and_roles(p, w, o)
    concurrent_acquires(w_dsn, p)
    forged_settings(p, w)
    planted(p, w)
    provenance(p, w, o, n, sf, x)
    python_client(w_dsn, p)
    if s_dsn:
        s = connect(s_dsn)
        if bindir and not tle:
            restored_dump(p, s, dsn, w_dsn, bindir)
        origin_refused(p, s, w)
        if tle:  # run_tle.sh has no crash phase: stock PostgreSQL again
            s.execute(f"GRANT EXECUTE ON FUNCTION {WAL} TO PUBLIC")
    else:
        print(
            "PORTABLE_SUPER_DSN not set: the origin checks with the WAL refused are skipped"
        )


# --- after a crash, on a promoted standby -----------------------------------------------


def crashed_phase(p):
    """WAL refused: the crash emptied the marker; a crash cannot be told from a promotion, so
    the registry is fenced: Snowflake waits, xid12 is granted at once from a new stripe."""
    w = connect(os.environ["PORTABLE_WRITER_DSN"])
    s = connect(os.environ["PORTABLE_SUPER_DSN"])
    check(
        one(p, "SELECT count(*) FROM idgen.idgen_registry_marker")[0] == 0,
        "marker kept by a crash",
    )
    before = origin_rows(p)
    # The marker gone, the WAL refused: the last checkpoint's timeline stands in; with the
    # control-file functions refused too, the recorded system identifier and timeline.
    check(
        one(p, "SELECT idgen.idgen_registry_timeline()")[0] == 1,
        "checkpoint's timeline",
    )
    s.execute(f"REVOKE EXECUTE ON FUNCTION {CONTROL} FROM PUBLIC")
    got = outcome(p, "SELECT pg_control_checkpoint()")
    check(
        got[:2] == ("error", "42501"), f"the owner still reads the control file: {got}"
    )
    got = one(
        p,
        "SELECT idgen.idgen_registry_system_identifier(), idgen.idgen_registry_timeline()",
    )
    check(
        tuple(got) == (before[-1][0], 1), f"all refused: {got}, recorded {before[-1]}"
    )
    check(
        one(p, "SELECT idgen.idgen_registry_check_origin()")[0] is not None,
        "not fenced after a crash, WAL refused",
    )
    rows = origin_rows(p)
    check(
        len(rows) == len(before) + 1
        and rows[-1][2]
        and rows[-1][3].startswith(
            "a crash recovery, a promoted standby or a restored backup"
        )
        and rows[-1][1] == 1,
        f"origin after a crash: {rows[-1]}",
    )
    got = outcome(w, "SELECT slot FROM idgen.idgen_acquire('snowflake', 'after-crash')")
    check(got[:2] == ("error", "IG001"), f"snowflake acquire after a crash: {got}")
    x = acquire(w, "xid12", "after-crash", "1 minute")
    check(
        x["slot"] % 64 == rows[-1][4] != before[-1][4],
        f"xid12 stripe {x['slot'] % 64}: {rows[-1]}",
    )
    p.execute("SELECT idgen.idgen_registry_lift_fence()")
    g = acquire(w, "snowflake", "after-lift", "1 minute")
    check(g["slot"] is not None, "snowflake after the lift")
    s.execute(f"GRANT EXECUTE ON FUNCTION {WAL}, {CONTROL} TO PUBLIC")
    print(
        f"crash, WAL and control file refused: fenced ({rows[-1][3][:40]}...), Snowflake IG001, xid12 slot "
        f"{x['slot']} of the new stripe {rows[-1][4]} at once; lifted by the owner"
    )


def crashed_wal_phase(p):
    """WAL readable: a crash is not a change of origin (native's meaning)."""
    check(
        one(p, "SELECT count(*) FROM idgen.idgen_registry_marker")[0] == 0,
        "marker kept by a crash",
    )
    before = origin_rows(p)
    fence = one(p, "SELECT idgen.idgen_registry_check_origin()")[0]
    check(
        origin_rows(p) == before,
        f"a crash with WAL readable changed the origin: {origin_rows(p)}",
    )
    check(
        one(p, "SELECT count(*) FROM idgen.idgen_registry_marker")[0] == 1,
        "marker not rewritten",
    )
    print(f"crash, WAL readable: no change of origin (latest fence still {fence})")


def promoted_phase(p):
    """A standby promoted: its marker is empty; the new timeline fences, as native. With the
    WAL functions refused, the checkpoint's timeline names it once a checkpoint was made."""
    s = connect(os.environ["PORTABLE_SUPER_DSN"])
    check(
        one(p, "SELECT count(*) FROM idgen.idgen_registry_marker")[0] == 0,
        "a standby's marker is not empty",
    )
    tli = int(
        one(p, "SELECT substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8)")[0], 16
    )
    s.execute("CHECKPOINT")
    s.execute(f"REVOKE EXECUTE ON FUNCTION {WAL} FROM PUBLIC")
    got = one(
        p,
        "SELECT idgen.idgen_registry_timeline(), idgen.idgen_registry_site_change(false)",
    )
    check(
        got[0] == tli and got[1].startswith("a crash recovery, a promoted standby"),
        f"WAL refused on the promoted standby: {got}",
    )
    s.execute(f"GRANT EXECUTE ON FUNCTION {WAL} TO PUBLIC")
    check(
        one(p, "SELECT idgen.idgen_registry_check_origin()")[0] is not None,
        "not fenced on a promoted standby",
    )
    last = origin_rows(p)[-1]
    check(
        last[1] == tli > 1
        and last[2]
        and last[3].startswith(f"a new timeline {tli} (was 1)"),
        f"promoted: {last}",
    )
    w = connect(os.environ["PORTABLE_WRITER_DSN"])
    got = outcome(w, "SELECT slot FROM idgen.idgen_acquire('snowflake', 'promoted')")
    check(
        got[:2] == ("error", "IG001"),
        f"snowflake acquire on the promoted standby: {got}",
    )
    print(
        f"promoted standby: marker empty; WAL refused, the checkpoint's timeline {tli}; "
        f"WAL readable: fenced ({last[3]}), Snowflake IG001"
    )


def main():
    phase, dsn = sys.argv[1], sys.argv[2]
    p = connect(dsn)
    {
        "main": lambda: main_phase(p, dsn),
        "crashed": lambda: crashed_phase(p),
        "crashed-wal": lambda: crashed_wal_phase(p),
        "promoted": lambda: promoted_phase(p),
    }[phase]()
    print(f"registry {phase}: {checks} checks, {len(failures)} failures")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
