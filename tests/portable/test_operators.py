"""Nobody plants code on the portable edition's types (issue 44), and an invalid id compared
with a column is native's 22P02. Run by tests/portable/run.sh after test_portable.py:

    python test_operators.py OWNER_DSN [NATIVE_DSN]

OWNER_DSN: the database where the owner (NOSUPERUSER, owns the database) installed the edition
into schema idgen. PORTABLE_WRITER_DSN, PORTABLE_OTHER_DSN: two roles with no rights of their
own (test_portable.py granted the writer portable/README.md's writer grants).

The attacker (the other role) owns a schema on the owner's search_path, and on PostgreSQL 14
(or 15+ after GRANT CREATE ON SCHEMA public TO PUBLIC) can CREATE in public. It tries to create
the six comparison operators on (xid12, xid12) and (rapkey, rapkey) there: refused (42501, no
USAGE on the types). What it can create (operators on anyelement, on text) is planted too.
Each planted function records current_user into a table the attacker reads. Then the owner
runs ordinary queries (=, <>, <, <=, >, >= with literals and with psycopg's untyped
parameters, a named cursor, a join, rapkey lookups) with the edition's schema first on the
path, last, and off it (qualified type names), and with PostgreSQL 14's default path: right
answers, and nothing planted ran. A role the owner grants USAGE can plant an exact operator:
with the edition's schema before its schema the edition's operator still wins, after it the
plant runs (so the recording works: the test can fail). Invalid, uppercase, short ids in WHERE,
as cursor parameters and in a named cursor raise 22P02 "invalid input syntax for type xid12"
(native's message where native has one). EXPLAIN: =, a cursor page, a join, a generic plan
and a time range use the primary key's index, and no plan calls the operators' functions.
"""

import os
import re
import sys

import psycopg

failures: list[str] = []
checks = 0
OPS = ("=", "<>", "<", "<=", ">", ">=")
PYOPS = {"=": lambda a, b: a == b, "<>": lambda a, b: a != b, "<": lambda a, b: a < b,
         "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}
ROWS = 20000


def check(ok: bool, what: str) -> None:
    global checks
    checks += 1
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def connect(dsn):
    return psycopg.connect(dsn, autocommit=True)


def outcome(conn, sql, params=None):
    """('ok', rows) or ('error', sqlstate, message)."""
    try:
        with conn.transaction():
            cur = conn.execute(sql, params)
            return ("ok", cur.fetchall() if cur.description else None)
    except psycopg.Error as e:
        return ("error", e.diag.sqlstate, e.diag.message_primary)


def plant(o, schema: str, left: str, right: str, tag: str) -> list:
    """The six comparison operators on (left, right) in schema, each recording that it ran.
    The outcome of each CREATE."""
    got = []
    for i, op in enumerate(OPS):
        fn = f"{schema}.cmp_{tag}_{i}"
        r = outcome(o, f"""CREATE FUNCTION {fn}(a {left}, b {right}) RETURNS boolean
            LANGUAGE plpgsql AS $b$ BEGIN PERFORM planted.note('{schema} {op} ({left}, {right})'); RETURN true; END $b$""")
        if r[0] == "ok":
            r = outcome(o, f"CREATE OPERATOR {schema}.{op} (LEFTARG = {left}, RIGHTARG = {right}, FUNCTION = {fn})")
        got.append(r)
    return got


def ran(o) -> list:
    return o.execute("SELECT what, who FROM planted.ran ORDER BY what").fetchall()


def plan_of(p, sql, params=None) -> str:
    return "\n".join(r[0] for r in p.execute("EXPLAIN (COSTS OFF) " + sql, params).fetchall())


def setup(p, o):
    database = p.execute("SELECT current_database()").fetchone()[0]
    p.execute(f'GRANT CREATE ON DATABASE "{database}" TO idgen_other, idgen_writer')  # the writer's: as test_portable.py
    p.execute("CREATE SCHEMA opt")
    p.execute("CREATE TABLE opt.items (id idgen.xid12 PRIMARY KEY, k idgen.rapkey NOT NULL UNIQUE, n int NOT NULL)")
    p.execute(f"""INSERT INTO opt.items SELECT idgen.gen_xid12(), idgen.rapkey_build('op', g::text), g
                  FROM generate_series(1, {ROWS}) g""")
    p.execute("CREATE TABLE opt.refs (ref idgen.xid12 NOT NULL, n int NOT NULL)")
    p.execute("INSERT INTO opt.refs SELECT id, n FROM opt.items WHERE n % 100 = 0")
    p.execute("ANALYZE opt.items, opt.refs")
    # The attacker's schema and the table its plants write to (readable by it).
    o.execute("CREATE SCHEMA planted")
    o.execute("GRANT USAGE ON SCHEMA planted TO PUBLIC")
    o.execute("CREATE TABLE planted.ran (what text, who name)")
    o.execute("GRANT INSERT, SELECT ON planted.ran TO PUBLIC")
    o.execute("""CREATE FUNCTION planted.note(what text) RETURNS void LANGUAGE plpgsql AS $b$
        BEGIN INSERT INTO planted.ran VALUES (what, current_user); END $b$""")
    o.execute("GRANT EXECUTE ON FUNCTION planted.note(text) TO PUBLIC")


def plants(p, o):
    """What the attacker may create on the types: nothing; the public schema as on 14."""
    granted = not p.execute("SELECT has_schema_privilege('public', 'public', 'CREATE')").fetchone()[0]
    if granted:  # 15+: the database owner owns public (pg_database_owner) and gives CREATE as 14 does
        p.execute("GRANT CREATE ON SCHEMA public TO PUBLIC")
    for schema in ("planted", "public"):
        for left, right, tag in (("idgen.xid12", "idgen.xid12", "x"), ("idgen.rapkey", "idgen.rapkey", "r"),
                                 ("text", "idgen.xid12", "tx"), ("idgen.xid12", "text", "xt")):
            got = plant(o, schema, left, right, tag)
            check(all(g[:2] == ("error", "42501") and "permission denied for type" in g[2] for g in got),
                  f"{schema}: operators on ({left}, {right}) created by a role without USAGE: {got}")
        # What needs no USAGE on the types: operators on anyelement and on text.
        for left, right, tag in (("anyelement", "anyelement", "any"), ("text", "text", "t")):
            got = plant(o, schema, left, right, tag)
            check(all(g[0] == "ok" for g in got), f"{schema}: operators on ({left}, {right}): {got}")
    # Other ways to the type: a function returning it, a table or view column, a cast.
    for sql in ("CREATE FUNCTION planted.f(a text) RETURNS idgen.xid12 LANGUAGE sql RETURN a",
                "CREATE TABLE planted.t (id idgen.xid12)",
                "CREATE VIEW planted.v AS SELECT '9m4e2mr0ui3e8a215n4g'::idgen.xid12 AS id",
                "CREATE DOMAIN planted.d AS idgen.xid12",
                "CREATE FUNCTION planted.g(a idgen.rapkey[]) RETURNS boolean LANGUAGE sql RETURN true"):
        got = outcome(o, sql)
        check(got[:2] == ("error", "42501"), f"the attacker: {sql}: {got}")
    return granted


def layouts():
    return {
        "edition first": "idgen, planted, public",
        "edition last": "planted, public, idgen",
        "edition off the path": "planted, public",
        "PostgreSQL 14 default": '"$user", public',
        "PostgreSQL 14 default, edition last": '"$user", public, idgen',
    }


def queries(p, o, ids, keys):
    """The owner's ordinary queries in each layout: right answers, nothing planted ran."""
    some = ids[ROWS // 3]
    for name, path in layouts().items():
        p.execute(f"SET search_path = {path}")
        for op in OPS:
            want = sum(1 for i in ids if PYOPS[op](i, some))
            got = outcome(p, f"SELECT count(*) FROM opt.items WHERE id {op} %s", [some])
            check(got == ("ok", [(want,)]), f"{name}: id {op} %s: {got} (want {want})")
            got = outcome(p, f"SELECT count(*) FROM opt.items WHERE '{some}' {op} id")
            want = sum(1 for i in ids if PYOPS[op](some, i))
            check(got == ("ok", [(want,)]), f"{name}: literal {op} id: {got} (want {want})")
        page = outcome(p, "SELECT id FROM opt.items WHERE id > %s ORDER BY id LIMIT 5", [some])
        want = [i for i in ids if i > some][:5]
        check(page == ("ok", [(i,) for i in want]), f"{name}: cursor page: {page}")
        with p.transaction():
            with p.cursor(name="walk") as c:
                c.execute("SELECT id FROM opt.items WHERE id >= %s ORDER BY id", [some])
                got = [r[0] for r in c.fetchmany(3)]
        check(got == [i for i in ids if i >= some][:3], f"{name}: named cursor: {got}")
        got = outcome(p, "SELECT count(*) FROM opt.refs r JOIN opt.items i ON i.id = r.ref")
        check(got == ("ok", [(ROWS // 100,)]), f"{name}: join: {got}")
        got = outcome(p, "SELECT count(*) FROM opt.items a JOIN opt.refs b ON a.id > b.ref WHERE b.n = 100")
        check(got == ("ok", [(ROWS - 100,)]), f"{name}: range join: {got}")
        k = keys[ROWS // 2]
        got = outcome(p, "SELECT n FROM opt.items WHERE k = %s", [k])
        check(got == ("ok", [(ROWS // 2 + 1,)]), f"{name}: rapkey =: {got}")
        got = outcome(p, "SELECT count(*) FROM opt.items WHERE k > %s AND k <> %s", [k, k])
        check(got == ("ok", [(sum(1 for x in keys if x > k),)]), f"{name}: rapkey >, <>: {got}")
        check(ran(o) == [], f"{name}: planted code ran: {ran(o)}")
    p.execute("SET search_path = ''")


def trusted_plant(p, w, o, ids):
    """A role the owner grants USAGE on xid12 can create an exact operator: before the
    edition's schema on the path it runs (as the owner: the recording works), after it the
    edition's wins."""
    p.execute("GRANT USAGE ON DOMAIN idgen.xid12 TO idgen_writer")
    w.execute("CREATE SCHEMA granted")
    w.execute("GRANT USAGE ON SCHEMA granted TO PUBLIC")
    got = plant(w, "granted", "idgen.xid12", "idgen.xid12", "x")
    check(all(g[0] == "ok" for g in got), f"a role with USAGE plants operators: {got}")
    some = ids[10]
    p.execute("SET search_path = idgen, granted")
    got = outcome(p, "SELECT count(*) FROM opt.items WHERE id = %s", [some])
    check(got == ("ok", [(1,)]) and ran(o) == [], f"edition before the USAGE holder's schema: {got}, {ran(o)}")
    p.execute("SET search_path = granted, idgen")
    got = outcome(p, "SELECT count(*) FROM opt.items WHERE id = %s", [some])
    check(got == ("ok", [(ROWS,)]) and ("granted = (idgen.xid12, idgen.xid12)", "idgen_owner") in ran(o),
          f"the USAGE holder's operator first on the path runs as the owner: {got}, {ran(o)[:1]}")
    p.execute("SET search_path = ''")
    w.execute("DROP SCHEMA granted CASCADE")
    p.execute("REVOKE USAGE ON DOMAIN idgen.xid12 FROM idgen_writer")
    o.execute("TRUNCATE planted.ran")


def invalid_ids(p, n, ids):
    """An invalid, uppercase or short id against the column: 22P02, as native."""
    some = ids[0]
    bad = {"uppercase": some.upper(), "short": some[:19], "garbage": "not-an-id-at-all!!!!", "empty": ""}
    for name, path in layouts().items():
        if "idgen" not in path:
            continue  # the edition's operators are not found: text's comparison (portable/README.md)
        p.execute(f"SET search_path = {path}")
        for what, value in bad.items():
            native = None
            if n is not None and what != "uppercase":  # native accepts uppercase input
                native = outcome(n, "SELECT count(*) FROM (VALUES ('9m4e2mr0ui3e8a215n4g'::xid12)) v(id) WHERE id = %s", [value])
            quoted = value.replace("'", "''")
            for label, sql, params in (
                ("literal", f"SELECT count(*) FROM opt.items WHERE id = '{quoted}'", None),
                ("parameter", "SELECT count(*) FROM opt.items WHERE id = %s", [value]),
                ("cursor page", "SELECT id FROM opt.items WHERE id > %s ORDER BY id LIMIT 10", [value]),
                ("literal left", f"SELECT count(*) FROM opt.items WHERE '{quoted}' <= id", None),
            ):
                got = outcome(p, sql, params)
                check(got[:2] == ("error", "22P02") and got[2] == f'invalid input syntax for type xid12: "{value}"',
                      f"{name}: {what} id, {label}: {got}")
                if native is not None:
                    check(native[:3] == got[:3], f"{name}: {what} id, {label}: native {native}, portable {got}")
            try:
                with p.transaction():
                    with p.cursor(name="bad") as c:
                        c.execute("SELECT id FROM opt.items WHERE id > %s ORDER BY id", [value])
                        c.fetchmany(10)
                got = ("ok",)
            except psycopg.Error as e:
                got = ("error", e.diag.sqlstate)
            check(got == ("error", "22P02"), f"{name}: {what} id, named cursor: {got}")
    p.execute("SET search_path = ''")


def index_use(p, ids):
    """EXPLAIN: the comparisons reach the primary key's index; no plan calls xid12_eq & co."""
    some = ids[ROWS // 2]
    for name in ("edition first", "edition last"):
        p.execute(f"SET search_path = {layouts()[name]}")
        plans = {
            "=": plan_of(p, "SELECT * FROM opt.items WHERE id = %s", [some]),
            "cursor page": plan_of(p, "SELECT * FROM opt.items WHERE id > %s ORDER BY id LIMIT 10", [some]),
            "time range": plan_of(p, "SELECT id FROM opt.items WHERE id >= idgen.xid12_min(now() - interval '1 minute')"
                                     " AND id < idgen.xid12_min(now() - interval '30 seconds')"),
        }
        p.execute("SET enable_seqscan = off")  # a join on items must still be able to use the index
        plans["join"] = plan_of(p, "SELECT * FROM opt.refs r JOIN opt.items i ON i.id = r.ref")
        p.execute("RESET enable_seqscan")
        p.execute("SET plan_cache_mode = force_generic_plan")
        p.execute("PREPARE page(unknown) AS SELECT * FROM opt.items WHERE id > $1 ORDER BY id LIMIT 10")
        plans["generic plan"] = plan_of(p, f"EXECUTE page('{some}')")
        p.execute("DEALLOCATE page")
        p.execute("RESET plan_cache_mode")
        for what, plan in plans.items():
            check("Index" in plan and "items_pkey" in plan and not re.search(r"xid12_(eq|ne|lt|le|gt|ge)\b", plan),
                  f"{name}: {what} does not use the index:\n{plan}")
        if name == "edition last":
            for what, plan in plans.items():
                print(f"EXPLAIN ({name}), {what}:\n{plan}")
    p.execute("SET search_path = ''")


def cleanup(p, o, granted):
    o.execute("DROP SCHEMA planted CASCADE")
    o.execute("""DO $$ DECLARE r record; BEGIN
        FOR r IN SELECT oid::regoperator AS op FROM pg_operator WHERE oprnamespace = 'public'::regnamespace
                  AND oprowner = current_user::regrole LOOP EXECUTE format('DROP OPERATOR %s', r.op); END LOOP;
        FOR r IN SELECT oid::regprocedure AS f FROM pg_proc WHERE pronamespace = 'public'::regnamespace
                  AND proowner = current_user::regrole LOOP EXECUTE format('DROP FUNCTION %s', r.f); END LOOP;
        END $$""")
    if granted:
        p.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
    p.execute("DROP SCHEMA opt CASCADE")
    database = p.execute("SELECT current_database()").fetchone()[0]
    p.execute(f'REVOKE CREATE ON DATABASE "{database}" FROM idgen_other')


def main():
    p = connect(sys.argv[1])
    n = connect(sys.argv[2]) if len(sys.argv) > 2 else None
    w, o = connect(os.environ["PORTABLE_WRITER_DSN"]), connect(os.environ["PORTABLE_OTHER_DSN"])
    acl = p.execute("SELECT typname, typacl::text FROM pg_type WHERE typnamespace = 'idgen'::regnamespace"
                    " AND typname IN ('xid12', 'rapkey') ORDER BY 1").fetchall()
    check(acl == [("rapkey", "{idgen_owner=U/idgen_owner}"), ("xid12", "{idgen_owner=U/idgen_owner}")],
          f"USAGE on the types is the owner's alone: {acl}")
    setup(p, o)
    ids = [r[0] for r in p.execute("SELECT id FROM opt.items ORDER BY n").fetchall()]
    check(ids == sorted(ids), "gen_xid12() ids in order")
    keys = [r[0] for r in p.execute("SELECT k FROM opt.items ORDER BY n").fetchall()]
    ids_sorted = sorted(ids)
    granted = plants(p, o)
    try:
        queries(p, o, ids_sorted, keys)
        trusted_plant(p, w, o, ids_sorted)
        invalid_ids(p, n, ids_sorted)
        index_use(p, ids_sorted)
    finally:
        cleanup(p, o, granted)
    print(f"test_operators: {checks} checks, {len(failures)} failures")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
