#!/usr/bin/env python3
"""Builds pg_idgen's portable SQL edition from portable/src/*.sql, in two packagings.

    python3 portable/build.py          writes portable/dist/pg_idgen_portable--<version>.sql
                                       and portable/dist/pg_idgen_tle--<version>.sql
    python3 portable/build.py --check  fails when the committed files differ from their source
    python3 portable/build.py --self-test  checks the edits of the native files (NATIVE) refuse
                                       a native file they do not fit

The sources name every object of the edition as @extschema@.name. The plain script (for any
PostgreSQL 14+, installed by psql as a role that owns the database) takes the schema from
psql's variable `schema` and runs each source file as one statement string in which
@extschema@ is replaced by the quoted schema name: psql does not interpolate variables inside
dollar quotes, where function bodies are, so the substitution happens in the server.
The version is the extension's: pg_idgen.control's default_version, which pgrx fills in from
Cargo.toml's version ('@CARGO_VERSION@'), so Cargo.toml is read when the control file defers.

The TLE script is one statement, pgtle.install_extension('pg_idgen', <version>, <comment>,
$_pgtle_$ <script> $_pgtle_$), run by a member of pgtle_admin; CREATE EXTENSION pg_idgen
[SCHEMA s] then runs the script, and PostgreSQL itself replaces @extschema@ (the extension is
not relocatable). Its script is the sources in order, then portable/src/extension/*.sql (what
only an extension can say: pg_extension_config_dump), then the version function.

Native SQL in the edition (NATIVE below): a portable source can stand for a native SQL file,
which then goes at its place in the order as it is, but for a few listed edits, with the portable
source put into it before a given line. So the writer registry is sql/registry.sql itself, not a
copy: portable/src/50_registry_portable.sql holds only what differs. Each edit replaces an exact
text that must occur as often as listed, and what the native text may not keep (a read of the
native library's settings, of WAL or control-file functions, a cast that means something else on
the portable domain) must be gone after the edits: a change of the native file that touches them
fails the build. In the plain script such a piece runs with the install schema first on the
search_path (after pg_catalog, which PostgreSQL searches first when it is not named; pg_temp last),
as CREATE EXTENSION runs it, because native files name their objects unqualified; and its
pg_extension_config_dump() calls, which only an extension's script may make, are left out.
"""

import pathlib
import re
import sys
from typing import NamedTuple

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
TAG = "$pg_idgen_src$"
TLE_TAG = "$_pgtle_$"
NAME = "pg_idgen"


class Edit(NamedTuple):
    why: str  # portable/README.md "The writer registry" has the table of these
    old: str
    new: str
    count: int  # how often old must occur in the native file


class Native(NamedTuple):
    path: str  # the native file, from the repository's root
    at: str  # the portable source goes in before the one line that starts so
    edits: list[Edit]
    # What may be left nowhere in the edited native file (comments aside).
    gone: list[str]


NATIVE = {
    "50_registry_portable.sql": Native(
        path="sql/registry.sql",
        at="-- Roles ---",
        edits=[
            Edit(
                "trusted: the owner of the registry's tables, not the extension's (a plain script makes none)",
                "(SELECT e.extowner FROM pg_extension e WHERE e.extname = 'pg_idgen')",
                "@extschema@.idgen_registry_owner()",
                1,
            ),
            Edit(
                "origin: the system identifier, or the recorded one where pg_control_system() is refused",
                "(SELECT system_identifier FROM pg_control_system())",
                "@extschema@.idgen_registry_system_identifier()",
                1,
            ),
            Edit(
                "origin: the WAL timeline, or what stands for it where the WAL functions are refused",
                "('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::bigint",
                "@extschema@.idgen_registry_timeline()",
                1,
            ),
            Edit(
                "origin: a restore or copy (other oids), or, WAL not readable, an empty unlogged marker",
                "        EXIT WHEN why IS NULL OR locked;\n",
                "        why := coalesce(why, @extschema@.idgen_registry_site_change(empty));\n"
                "        EXIT WHEN why IS NULL OR locked;\n",
                1,
            ),
            Edit(
                "origin: once decided, the marker and the oids are written",
                "    IF empty THEN\n        -- No history",
                "    PERFORM @extschema@.idgen_registry_mark_site();\n    IF empty THEN\n        -- No history",
                1,
            ),
            Edit(
                "own slot: the worker id of idgen_config (pg_idgen.worker_id is a placeholder any role can set here)",
                "nullif(coalesce(current_setting('pg_idgen.worker_id', true), '-1')::int, -1)",
                "@extschema@.idgen_registry_worker_id()",
                1,
            ),
            Edit(
                "own slot: the machine id of idgen_config or derived, not the session's cache",
                "@extschema@.xid12_current_machine()",
                "@extschema@.idgen_registry_machine()",
                1,
            ),
            Edit(
                "the Snowflake epoch of idgen_config (pg_idgen.snowflake_epoch is a placeholder here)",
                "coalesce(nullif(current_setting('pg_idgen.snowflake_epoch', true), ''), '1288834974657')::bigint",
                "@extschema@.idgen_registry_epoch()",
                2,
            ),
            Edit(
                "words: the epoch is a column of idgen_config",
                "and pg_idgen.snowflake_epoch is now %",
                "and idgen_config.snowflake_epoch is now %",
                1,
            ),
            Edit(
                "words: the epoch is a column of idgen_config",
                "Set pg_idgen.snowflake_epoch back",
                "Set idgen_config.snowflake_epoch back",
                1,
            ),
            Edit(
                "words: the worker id is a column of idgen_config",
                "'this server (pg_idgen.worker_id)'",
                "'this server (idgen_config.worker_id)'",
                1,
            ),
            Edit(
                "an xid12's bytes: id::bytea is text's cast on the domain (the 20 characters)",
                "(SELECT id::bytea AS b)",
                "(SELECT @extschema@.xid12_to_bytea(id) AS b)",
                1,
            ),
            Edit(
                "idgen_verify: the xid12 domain's base type is text, so the domain itself is the kind",
                "(SELECT coalesce(nullif(t.typbasetype, 0), t.oid) FROM pg_type t WHERE t.oid = typ)",
                "@extschema@.idgen_registry_id_type(typ)",
                1,
            ),
        ],
        gone=[
            "pg_control_system(",
            "pg_current_wal_lsn(",
            "pg_walfile_name(",
            "pg_idgen.",
            "::bytea",
            "xid12_current_machine(",
            " pg_extension ",
        ],
    ),
}
CONFIG_DUMP = re.compile(
    r"^SELECT pg_catalog\.pg_extension_config_dump\('\w+', ''\);\n", re.M
)


def native_piece(
    portable: pathlib.Path, native: Native, plain: bool, text: str | None = None
) -> str:
    """The native file (or TEXT in its place) with its edits and the portable source in it;
    for the plain script without its pg_extension_config_dump() calls."""
    text = (ROOT / native.path).read_text() if text is None else text
    for e in native.edits:
        n = text.count(e.old)
        if n != e.count:
            sys.exit(
                f"build.py: {native.path} has {n} times, not {e.count}: {e.old!r} ({e.why})"
            )
        text = text.replace(e.old, e.new)
    code = "\n".join(line.split("--")[0] for line in text.splitlines())
    for g in native.gone:
        if g in code:
            sys.exit(
                f"build.py: {native.path} still has {g!r} after its edits: extend NATIVE's edits"
            )
    if plain:
        dumps = len(CONFIG_DUMP.findall(text))
        if dumps != text.count("pg_extension_config_dump(") or not dumps:
            sys.exit(
                f"build.py: {native.path} calls pg_extension_config_dump otherwise than as one line each"
            )
        text = CONFIG_DUMP.sub("", text)
    lines = text.splitlines(keepends=True)
    at = [i for i, line in enumerate(lines) if line.startswith(native.at)]
    if len(at) != 1:
        sys.exit(
            f"build.py: {native.path} has {len(at)} lines starting {native.at!r}, not 1"
        )
    spliced = [
        f"-- ===== portable/src/{portable.name} (build.py puts it here) =====\n",
        portable.read_text().rstrip("\n") + "\n",
        f"-- ===== {native.path}, continued =====\n",
    ]
    return "".join(lines[: at[0]] + spliced + lines[at[0] :])


def pieces(plain: bool) -> list[tuple[str, str, bool]]:
    """The sources in order, as (label, text, native): a portable source that stands for a
    native file (NATIVE) is that file with its edits."""
    out = []
    for path in sources():
        native = NATIVE.get(path.name)
        if native:
            out.append(
                (
                    f"{native.path}, edited, with portable/src/{path.name}",
                    native_piece(path, native, plain),
                    True,
                )
            )
        else:
            out.append((f"portable/src/{path.name}", path.read_text(), False))
    return out


def self_test() -> None:
    """That the edits of the native files are what they say: a native file in which an edit's
    text is missing, or that calls what must be gone, does not build; the plain packaging has
    no pg_extension_config_dump() call, the extension's has the native file's; the portable
    source is in it once, before its line."""
    failed = []
    for name, native in NATIVE.items():
        portable = HERE / "src" / name
        text = (ROOT / native.path).read_text()

        def refused(mutant: str, what: str) -> None:
            try:
                native_piece(portable, native, True, mutant)
            except SystemExit:
                return
            failed.append(f"{native.path}: {what} built")

        for e in native.edits:
            refused(text.replace(e.old, "", 1), f"without one {e.old!r}")
            refused(text + e.old, f"with one more {e.old!r}")
        for g in native.gone:
            refused(text + f"\nSELECT {g}x;\n", f"calling {g!r}")
        plain = native_piece(portable, native, True)
        tle = native_piece(portable, native, False)
        dumps = text.count("pg_extension_config_dump(")
        if (
            "pg_extension_config_dump(" in plain
            or tle.count("pg_extension_config_dump(") != dumps
        ):
            failed.append(f"{native.path}: pg_extension_config_dump in the packagings")
        source = portable.read_text().rstrip("\n")
        for piece in (plain, tle):
            if piece.count(source) != 1 or not piece.split(source)[1].split("\n", 2)[
                2
            ].startswith(native.at):
                failed.append(
                    f"{native.path}: {name} is not in it once, before {native.at!r}"
                )
        print(
            f"build.py --self-test: {native.path}: {2 * len(native.edits) + len(native.gone)} "
            f"broken copies refused, {dumps} pg_extension_config_dump calls in the TLE only, "
            f"{name} once before {native.at!r}"
        )
    if failed:
        sys.exit("build.py --self-test failed:\n" + "\n".join(failed))


def version() -> str:
    control = (ROOT / "pg_idgen.control").read_text()
    v = re.search(r"^default_version\s*=\s*'([^']*)'", control, re.M).group(1)
    if v == "@CARGO_VERSION@":
        cargo = (ROOT / "Cargo.toml").read_text()
        v = re.search(r'^version\s*=\s*"([^"]+)"', cargo, re.M).group(1)
    if not re.fullmatch(r"\d+\.\d+\.\d+", v):
        sys.exit(f"build.py: unexpected version {v!r}")
    return v


def sources() -> list[pathlib.Path]:
    files = sorted((HERE / "src").glob("*.sql"))
    if not files:
        sys.exit("build.py: no portable/src/*.sql")
    return files


def comment() -> str:
    control = (ROOT / "pg_idgen.control").read_text()
    return re.search(r"^comment\s*=\s*'([^']*)'", control, re.M).group(1)


def version_function(v: str) -> str:
    return (
        "CREATE FUNCTION @extschema@.idgen_portable_version() RETURNS text\n"
        f"    LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURN '{v}';"
    )


def plain_script(v: str) -> str:
    out = [
        f"-- pg_idgen portable {v}: the plain SQL script. GENERATED by portable/build.py from",
        "-- portable/src/*.sql: edit those, then run python3 portable/build.py.",
        "--",
        "-- Install (PostgreSQL 14+, UTF8 database, as a role that owns it; no superuser):",
        f"--     psql -v schema=idgen -f pg_idgen_portable--{v}.sql",
        "-- Everything is created in that schema, in one transaction. See portable/README.md.",
        r"\set ON_ERROR_STOP on",
        r"\if :{?schema}",
        r"\else",
        r"\echo 'pg_idgen portable: give the schema to install into: psql -v schema=NAME -f FILE'",
        r"\quit",
        r"\endif",
        r"\set QUIET on",
        "BEGIN;",
        "SET LOCAL search_path = pg_catalog, pg_temp;",
        "SET LOCAL idgen_portable.install_schema = :'schema';",
        "DO $pg_idgen_check$",
        "BEGIN",
        "    IF current_setting('server_version_num')::integer < 140000 THEN",
        "        RAISE EXCEPTION 'pg_idgen portable needs PostgreSQL 14 or later';",
        "    ELSIF current_setting('server_encoding') <> 'UTF8' THEN",
        "        RAISE EXCEPTION 'pg_idgen portable needs a UTF8 database';",
        "    END IF;",
        "END",
        "$pg_idgen_check$;",
        'CREATE SCHEMA IF NOT EXISTS :"schema";',
    ]
    schema = "pg_catalog.quote_ident(pg_catalog.current_setting('idgen_portable.install_schema'))"
    for label, text, native in pieces(plain=True):
        if TAG in text:
            sys.exit(f"build.py: {label} contains {TAG}")
        out += ["", f"-- ===== {label} =====", "DO $pg_idgen_install$", "BEGIN"]
        if native:
            # Unqualified names, as in CREATE EXTENSION: the install schema first (pg_catalog
            # is searched before it, not being named; pg_temp after).
            out.append(
                f"    PERFORM pg_catalog.set_config('search_path', {schema} || ', pg_temp', true);"
            )
        out += [
            "    EXECUTE replace(" + TAG,
            text.rstrip("\n"),
            TAG
            + ", '@extschema@', quote_ident(current_setting('idgen_portable.install_schema')));",
        ]
        if native:
            out.append(
                "    PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);"
            )
        out += ["END", "$pg_idgen_install$;"]
    out += [
        "",
        "DO $pg_idgen_install$",
        "BEGIN",
        "    EXECUTE replace(" + TAG,
        version_function(v),
        TAG
        + ", '@extschema@', quote_ident(current_setting('idgen_portable.install_schema')));",
        "END",
        "$pg_idgen_install$;",
        "COMMIT;",
        "",
    ]
    return "\n".join(out)


def tle_script(v: str) -> str:
    body = []
    extension = [
        (f"portable/{p.relative_to(HERE)}", p.read_text(), False)
        for p in sorted((HERE / "src" / "extension").glob("*.sql"))
    ]
    for label, text, _ in pieces(plain=False) + extension:
        if TLE_TAG in text:
            sys.exit(f"build.py: {label} contains {TLE_TAG}")
        body += [f"-- ===== {label} =====", text.rstrip("\n"), ""]
    body += ["-- ===== build.py =====", version_function(v)]
    description = comment().replace("'", "''") + " (portable SQL edition)"
    return "\n".join(
        [
            f"-- pg_idgen portable {v}: the pg_tle packaging. GENERATED by portable/build.py from",
            "-- portable/src: edit those, then run python3 portable/build.py.",
            "--",
            "-- Install (PostgreSQL 14+ with pg_tle, e.g. RDS, Aurora, Supabase), as a member of",
            "-- pgtle_admin that owns the database (no superuser), with psql or any SQL client:",
            f"--     psql -f pg_idgen_tle--{v}.sql",
            "--     CREATE SCHEMA idgen;",
            f"--     CREATE EXTENSION {NAME} SCHEMA idgen;",
            "-- See portable/README.md.",
            "SELECT pgtle.install_extension(",
            f"    '{NAME}',",
            f"    '{v}',",
            f"    '{description}',",
            TLE_TAG,
            *body,
            TLE_TAG,
            ");",
            "",
        ]
    )


def main() -> None:
    v = version()
    dist = HERE / "dist"
    targets = {
        dist / f"pg_idgen_portable--{v}.sql": plain_script(v),
        dist / f"pg_idgen_tle--{v}.sql": tle_script(v),
    }
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        return
    if sys.argv[1:] == ["--check"]:
        stale = [p.name for p in dist.glob("*.sql") if p not in targets]
        for target, text in targets.items():
            if not target.exists() or target.read_text() != text:
                sys.exit(
                    f"build.py --check: {target.relative_to(ROOT)} is not what portable/src builds; run python3 portable/build.py"
                )
        if stale:
            sys.exit(f"build.py --check: stale files in portable/dist: {stale}")
        names = ", ".join(str(t.relative_to(ROOT)) for t in targets)
        print(f"build.py --check: {names} match portable/src")
        return
    if sys.argv[1:]:
        sys.exit(__doc__)
    dist.mkdir(exist_ok=True)
    for old in dist.glob("*.sql"):
        if old not in targets:
            old.unlink()
    for target, text in targets.items():
        target.write_text(text)
        print(f"wrote {target.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
