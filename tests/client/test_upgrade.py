"""ALTER EXTENSION pg_idgen UPDATE from every released version gives a fresh install's objects
and keeps the data, its indexes and the generators' order."""
import re
from pathlib import Path

import psycopg
import pytest

from servers import connect, fresh_database

OBJECTS = (Path(__file__).parent / "extension_objects.sql").read_text()
SQL = Path(__file__).parents[2] / "sql" / "released"


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


# Every released version: each has its install script frozen in sql/released/ as pg_idgen--X.Y.Z.sql.
RELEASED = sorted((m.group(1) for f in SQL.iterdir()
                   if (m := re.fullmatch(r"pg_idgen--(\d+\.\d+\.\d+)\.sql", f.name))), key=version_key)
assert RELEASED, f"no frozen install scripts in {SQL}"


def extension_objects(dbname: str) -> list[str]:
    with connect(dbname=dbname) as conn:
        return [row[0] for row in conn.execute(OBJECTS)]


def snapshot(conn) -> str:
    return conn.execute(
        "SELECT string_agg(concat_ws(':', id, k, flake, n), ',' ORDER BY id) FROM upgraded").fetchone()[0]


# What 0.6.0's README told a DBA to grant a writer role.
OLD_WRITER_GRANTS = (
    "GRANT SELECT, INSERT, UPDATE ON idgen_registry_grant, idgen_registry_slot TO upgrade_old_writer",
    "GRANT SELECT, INSERT ON idgen_registry_origin TO upgrade_old_writer",
    "GRANT USAGE ON SEQUENCE idgen_registry_grant_id_seq TO upgrade_old_writer",
    "GRANT SELECT, UPDATE ON SEQUENCE idgen_registry_noticed_ms TO upgrade_old_writer",
    "GRANT SELECT ON idgen_grants TO upgrade_old_writer",
    "GRANT SELECT, INSERT, UPDATE ON idgen_registry_report TO upgrade_old_writer",
)


@pytest.mark.parametrize("version", RELEASED)
def test_update_from_released_version(version, worker_42):
    old = "upgrade_from_" + version.replace(".", "_")
    fresh_database(old)
    fresh_database("fresh_install")
    with connect(dbname="fresh_install") as conn:
        conn.execute("CREATE EXTENSION pg_idgen")
        current = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'pg_idgen'").fetchone()[0]
    assert current != version

    with connect(dbname=old) as conn:
        conn.execute(f"CREATE EXTENSION pg_idgen VERSION '{version}'")
        conn.execute("CREATE EXTENSION amcheck")
        conn.execute("CREATE TABLE upgraded (id xid12 PRIMARY KEY DEFAULT gen_xid12(), "
                     "k rapkey UNIQUE, flake bigint UNIQUE DEFAULT gen_snowflake(), n int)")
        conn.execute("CREATE INDEX upgraded_hash ON upgraded USING hash (id)")
        conn.execute("CREATE INDEX upgraded_brin ON upgraded USING brin (id)")
        conn.execute("INSERT INTO upgraded (k, n) SELECT rapkey_next('ord.cn.sh'), g FROM generate_series(1, 5000) g")
        before = snapshot(conn)
        max_id, max_flake = conn.execute("SELECT max(id)::text, max(flake) FROM upgraded").fetchone()

        # 0.6.0's README had a DBA give writer roles rights on the registry's tables: 0.7.0 takes
        # every one of them away (only its functions change them now) and says so in a WARNING.
        has_registry = version_key(version) >= (0, 6, 0)
        if has_registry:
            conn.execute("DROP ROLE IF EXISTS upgrade_old_writer")
            conn.execute("CREATE ROLE upgrade_old_writer")
            for grant in OLD_WRITER_GRANTS:
                conn.execute(grant)
        # A role that is not a superuser owns a table with an xid12 column and a function taking a
        # rapkey, made while USAGE on the types was PUBLIC's (every released version). Roles of
        # their own per version, so that one version's failure leaves the others' alone.
        owner, stranger = f"{old}_owner", f"{old}_stranger"
        for role in (owner, stranger):
            conn.execute(f"DROP ROLE IF EXISTS {role}")
            conn.execute(f"CREATE ROLE {role}")
        conn.execute(f"CREATE SCHEMA upgrade_owned AUTHORIZATION {owner}")
        conn.execute(f"SET ROLE {owner}")
        conn.execute("CREATE TABLE upgrade_owned.t (id xid12 PRIMARY KEY, n int)")
        conn.execute("CREATE FUNCTION upgrade_owned.kind(k rapkey) RETURNS text LANGUAGE sql RETURN rapkey_type(k)")
        conn.execute("RESET ROLE")
        notices, hints = [], []
        conn.add_notice_handler(lambda diag: (notices.append(diag.message_primary or ""),
                                              hints.append(diag.message_hint or "")))
        conn.execute("ALTER EXTENSION pg_idgen UPDATE")
        assert conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'pg_idgen'").fetchone()[0] == current
        # USAGE on the types leaves PUBLIC (issue 44: nobody plants operators on them). The update
        # grants it to nobody (a GRANT in an extension script is an initial privilege, which
        # pg_dump leaves out): it names the role that owns objects using the types, with the GRANT
        # to run, and not the role that owns none.
        for t in ("xid12", "rapkey"):
            assert conn.execute("SELECT count(*) FROM pg_type ty, aclexplode(coalesce(ty.typacl, acldefault('T', ty.typowner))) a "
                                "WHERE ty.oid = %s::regtype AND a.grantee = 0", [t]).fetchone()[0] == 0, t
            assert conn.execute("SELECT has_type_privilege('public', %s, 'USAGE'), has_type_privilege(%s, %s, 'USAGE'), "
                                "has_type_privilege(%s, %s, 'USAGE')",
                                [t, owner, t, stranger, t]).fetchone() == (False, False, False), t
        warned = [n for n in notices if "no longer has USAGE on the types xid12 and rapkey" in n]
        assert len(warned) == 1, notices
        hint = [d for d in hints if "GRANT USAGE ON TYPE" in d]
        assert len(hint) == 1 and f"GRANT USAGE ON TYPE xid12 TO {owner};" in hint[0] \
            and f"GRANT USAGE ON TYPE rapkey TO {owner};" in hint[0] and stranger not in hint[0], hints
        conn.execute(f"SET ROLE {owner}")
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="permission denied for type xid12"):
            conn.execute("ALTER TABLE upgrade_owned.t ADD COLUMN later xid12")
        conn.execute("RESET ROLE")
        # The GRANTs the hint names, run as it says: the owner goes on creating them; they are the
        # DBA's own grants now, which pg_dump keeps.
        conn.execute(hint[0].split("owner: ", 1)[1])
        conn.execute(f"SET ROLE {owner}")
        conn.execute("ALTER TABLE upgrade_owned.t ADD COLUMN later xid12")
        conn.execute("CREATE FUNCTION upgrade_owned.parts(k rapkey) RETURNS text[] LANGUAGE sql RETURN rapkey_segments(k)")
        conn.execute("RESET ROLE")
        assert conn.execute("SELECT count(*) FROM pg_init_privs i, aclexplode(i.initprivs) a "
                            "WHERE i.objoid IN ('xid12'::regtype, 'rapkey'::regtype) AND a.grantee = %s::regrole",
                            [owner]).fetchone()[0] == 0
        conn.execute(f"SET ROLE {stranger}")
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="permission denied for type xid12"):
            conn.execute("CREATE TEMP TABLE stranger (id xid12)")
        conn.execute("RESET ROLE")
        conn.execute("DROP SCHEMA upgrade_owned CASCADE")
        for t in ("xid12", "rapkey"):
            conn.execute(f"REVOKE USAGE ON TYPE {t} FROM {owner}")
        for role in (owner, stranger):
            conn.execute(f"DROP ROLE {role}")
        if has_registry:
            assert [n for n in notices if "revoked from upgrade_old_writer" in n], notices
            rights = conn.execute(
                "SELECT c.relname, a.privilege_type FROM pg_class c, aclexplode(c.relacl) a "
                "WHERE a.grantee = 'upgrade_old_writer'::regrole AND c.relname LIKE 'idgen_registry%'").fetchall()
            assert rights == []
            # The writer functions are not PUBLIC's: the role has no way in until a DBA allows it.
            assert not conn.execute("SELECT has_function_privilege('upgrade_old_writer', "
                                    "'idgen_acquire(text, text, interval, text)', 'EXECUTE')").fetchone()[0]
            conn.execute("REVOKE ALL ON idgen_grants FROM upgrade_old_writer")
            conn.execute("DROP ROLE upgrade_old_writer")

        assert snapshot(conn) == before
        for index in ("upgraded_pkey", "upgraded_k_key", "upgraded_flake_key"):
            conn.execute(f"SELECT bt_index_check('{index}', true)")
        # The hash and BRIN indexes still answer lookups, each on its own.
        others = {"upgraded_hash": "DROP INDEX upgraded_brin", "upgraded_brin": "DROP INDEX upgraded_hash"}
        for index, drop_other in others.items():
            with conn.transaction(force_rollback=True):
                conn.execute("ALTER TABLE upgraded DROP CONSTRAINT upgraded_pkey")
                conn.execute(drop_other)
                conn.execute("SET LOCAL enable_seqscan = off")
                plan = "\n".join(r[0] for r in conn.execute(f"EXPLAIN SELECT n FROM upgraded WHERE id = '{max_id}'"))
                assert index in plan, plan
                assert conn.execute(f"SELECT n FROM upgraded WHERE id = '{max_id}'").fetchone()[0] == 5000

        # The generators continue after the stored ids, with no duplicates.
        conn.execute("INSERT INTO upgraded (k, n) SELECT rapkey_next('ord.cn.sh'), g FROM generate_series(5001, 6000) g")
        assert conn.execute(
            "SELECT count(*) FROM upgraded WHERE n > 5000 AND (id <= %s::xid12 OR flake <= %s)",
            (max_id, max_flake)).fetchone()[0] == 0
        assert conn.execute("SELECT k FROM upgraded WHERE n = 6000").fetchone()[0].startswith("ord.cn.sh.6000-")

    updated, fresh = extension_objects(old), extension_objects("fresh_install")
    assert not [line for line in updated if "not compared" in line]
    assert updated == fresh
