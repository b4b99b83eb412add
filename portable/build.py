#!/usr/bin/env python3
"""Builds pg_idgen's portable SQL edition from portable/src/*.sql, in two packagings.

    python3 portable/build.py          writes portable/dist/pg_idgen_portable--<version>.sql
                                       and portable/dist/pg_idgen_tle--<version>.sql, and for
                                       each portable/src/upgrade/<from>--<to>.sql
                                       portable/dist/pg_idgen_portable--<from>--<to>.sql and
                                       portable/dist/pg_idgen_tle--<from>--<to>.sql
    python3 portable/build.py --check  fails when the committed files differ from their source
    python3 portable/build.py --self-test  checks that NATIVE's records refuse a native file
                                       (or portable source) they do not fit
    python3 portable/build.py --version 0.7.1 --upgrades DIR --out DIR
                                       (tests) builds a synthetic next version into DIR, with
                                       the upgrades of DIR besides portable/src/upgrade

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

Upgrades: portable/src/upgrade/<from>--<to>.sql, written by hand (the difference between the
two versions' sources, as sql/upgrade/ is for native), must chain from FIRST_VERSION to the
version built. Each gives a plain upgrade script (psql -v schema=S, one transaction, refusing a
schema that does not hold <from>) and a pg_tle one (pgtle.install_update_path and
pgtle.set_default_version, then ALTER EXTENSION pg_idgen UPDATE); both run the same text,
framed by upgrade_pieces(). portable/README.md "Upgrades".

Native SQL files in the edition (NATIVE below, issue #37: one definition of each capability):
a portable source can stand for a native SQL file, which then goes in at its place in the order
as it is, but for what its Native record lists. Edits replace an exact text that must occur as
often as listed; functions it `replaces` are cut out (a comment line stays in their place) and
the portable source must define each with the native header (name, parameters, RETURNS) and no
other native function. What the native text may not keep must be gone after that: the native
library (MODULE_PATHNAME, LANGUAGE C) always, and the record's `gone` list (a read of the
native library's settings, of WAL or control-file functions, a cast that means something else on
the portable domain), so a change of the native file that touches them fails the build. The
portable source goes after the native text (a piece of its own), or, with `at`, into it before
the one line that starts so. So the writer registry is sql/registry.sql itself (edits, and
portable/src/50_registry_portable.sql spliced in) and idgen_backfill is sql/backfill.sql
(one C function cut, defined by portable/src/60_backfill_portable.sql). In the plain script a
native piece runs with the install schema first on the search_path (after pg_catalog, which
PostgreSQL searches first when it is not named; pg_temp last), as CREATE EXTENSION runs it,
because native files name their objects unqualified; and its pg_extension_config_dump() calls,
which only an extension's script may make, are left out (the TLE keeps them).
"""

from __future__ import annotations

import argparse
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
    why: str  # portable/README.md "The writer registry" has the table of the registry's
    old: str
    new: str
    count: int  # how often old must occur in the native file


class Native(NamedTuple):
    """A native SQL file taken into the edition for the portable source that names it."""

    path: str  # the native file, from the repository's root
    # Where the portable source goes: None, after the native text (a piece of its own, run as
    # the other portable sources are); else in it, before the one line that starts so.
    at: str | None = None
    edits: tuple[Edit, ...] = ()  # exact texts replaced, each as often as its count
    gone: tuple[str, ...] = ()  # what the edited text may keep nowhere (comments aside)
    # Native functions cut out of the text (a comment line stays in their place), as in
    # regprocedure ('f(integer)'): the portable source defines each with the native header.
    replaces: tuple[str, ...] = ()


# What no native text in the edition may keep, whatever its record says: the native library.
NATIVE_LIBRARY = ("MODULE_PATHNAME", "LANGUAGE C")

# portable source -> the native file it stands for. Why each edit or replacement: portable/README.md
# ("The writer registry"; "What differs from native").
NATIVE = {
    "50_registry_portable.sql": Native(
        path="sql/registry.sql",
        at="-- Roles ---",
        edits=(
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
        ),
        gone=(
            "pg_control_system(",
            "pg_current_wal_lsn(",
            "pg_walfile_name(",
            "pg_idgen.",
            "::bytea",
            "xid12_current_machine(",
            " pg_extension ",
        ),
    ),
    "60_backfill_portable.sql": Native(
        path="sql/backfill.sql",
        # A C function: arms PostgreSQL's statement timer for one batch.
        replaces=("idgen_statement_timeout(integer)",),
    ),
}
CONFIG_DUMP = re.compile(r"^SELECT pg_catalog\.pg_extension_config_dump\('\w+', ''\);\n", re.M)


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


def _skip(text: str, i: int) -> int:
    """The index after the comment, quoted string or dollar-quoted body starting at i, or i."""
    if text.startswith("--", i):
        end = text.find("\n", i)
        return len(text) if end < 0 else end + 1
    if text.startswith("/*", i):
        depth, j = 0, i
        while j < len(text):
            if text.startswith("/*", j):
                depth, j = depth + 1, j + 2
            elif text.startswith("*/", j):
                depth, j = depth - 1, j + 2
                if depth == 0:
                    return j
            else:
                j += 1
        sys.exit("build.py: unterminated comment")
    if text[i] in "'\"":
        j = i + 1
        while True:
            j = text.find(text[i], j)
            if j < 0:
                sys.exit("build.py: unterminated quote")
            if text.startswith(text[i] * 2, j):
                j += 2
                continue
            return j + 1
    m = re.match(r"\$([A-Za-z_][A-Za-z0-9_]*)?\$", text[i:])
    if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
        end = text.find(m.group(0), i + len(m.group(0)))
        if end < 0:
            sys.exit(f"build.py: unterminated {m.group(0)}")
        return end + len(m.group(0))
    return i


def _scan_to(text: str, i: int, stop: str) -> int:
    """The index of the first stop character from i at parenthesis depth 0, outside comments
    and quotes."""
    depth = 0
    while i < len(text):
        j = _skip(text, i)
        if j != i:
            i = j
            continue
        c = text[i]
        if c == stop and depth == 0:
            return i
        depth += (c == "(") - (c == ")")
        i += 1
    sys.exit(f"build.py: no {stop!r} where one was expected")


CREATE_ROUTINE = re.compile(
    r"^CREATE\s+(?:OR\s+REPLACE\s+)?(?:FUNCTION|PROCEDURE)\s+(@extschema@\.)?([A-Za-z_][A-Za-z0-9_]*)\s*\(",
    re.M | re.I,
)


def routines(text: str) -> dict[str, tuple[int, int, str]]:
    """Each CREATE FUNCTION/PROCEDURE statement of text: signature (name and argument types,
    as in regprocedure: 'f(integer)') -> (start, end after its ';', its header, whitespace
    collapsed: the name, the parameter list and the rest of the line that closes it)."""
    found = {}
    for m in CREATE_ROUTINE.finditer(text):
        close = _scan_to(text, m.end(), ")")
        types = []
        params = text[m.end() : close]
        start = 0
        while params.strip():
            comma = _scan_to(params + ",", start, ",")
            param, params = params[:comma].strip(), params[comma + 1 :]
            param = re.split(r"\s+DEFAULT\s+|\s*=\s*", param, maxsplit=1, flags=re.I)[0]
            words = param.split()
            mode = words[0].upper() if words[0].upper() in ("IN", "OUT", "INOUT", "VARIADIC") else "IN"
            words = words[1:] if mode != "IN" or words[0].upper() == "IN" else words
            if len(words) < 2:
                sys.exit(f"build.py: {m.group(2)}: name every parameter ({param!r})")
            if mode != "OUT":
                types.append(" ".join(words[1:]).lower())
        line_end = text.find("\n", close)
        header = " ".join(text[m.start(2) : line_end if line_end >= 0 else len(text)].split())
        signature = f"{m.group(2)}({', '.join(types)})"
        if signature in found:
            sys.exit(f"build.py: {signature} is created twice")
        found[signature] = (m.start(), _scan_to(text, close + 1, ";") + 1, header)
    return found


def native_label(name: str, native: Native) -> str:
    label = native.path + " (native)"
    if native.edits:
        label += ", edited"
    if native.replaces:
        label += f", without {', '.join(native.replaces)}: in portable/src/{name}"
    if native.at is not None:
        label += f", with portable/src/{name}"
    return label


def native_pieces(
    name: str, native: Native, plain: bool, text: str | None = None, source: str | None = None
) -> list[tuple[str, str, bool]]:
    """The pieces (label, text, native) that the portable source NAME and its native file make:
    the native file (or TEXT in its place) with its edits made and the functions it replaces cut
    out, then the source (SOURCE in its place) after it or spliced in before the line `at`; in
    the plain script without pg_extension_config_dump() calls, which only an extension's script
    may make. Refuses a native file the record does not fit."""
    text = (ROOT / native.path).read_text() if text is None else text
    source = (HERE / "src" / name).read_text() if source is None else source
    for e in native.edits:
        n = text.count(e.old)
        if n != e.count:
            sys.exit(f"build.py: {native.path} has {n} times, not {e.count}: {e.old!r} ({e.why})")
        text = text.replace(e.old, e.new)
    ours = routines(source)
    theirs = routines(text)
    for signature in sorted(native.replaces, key=lambda s: -theirs.get(s, (0,))[0]):
        if signature not in theirs:
            sys.exit(f"build.py: {native.path} defines no {signature} (NATIVE, for {name})")
        if signature not in ours:
            sys.exit(f"build.py: {name} does not define {signature}, which it replaces")
        start, end, header = theirs[signature]
        if ours[signature][2] != header:
            sys.exit(f"build.py: {name}'s {signature} is not native's:\n  {ours[signature][2]}\n  {header}")
        text = f"{text[:start]}-- {signature}: the portable edition's is in portable/src/{name}{text[end:]}"
    for signature in sorted(set(ours) & set(theirs) - set(native.replaces)):
        sys.exit(f"build.py: {name} defines {signature} of {native.path}, which NATIVE does not list")
    code = "\n".join(line.split("--")[0] for line in text.splitlines())
    for what in NATIVE_LIBRARY:
        if re.search(rf"(?<![\w.]){what}(?!\w)", code, re.I):
            sys.exit(f"build.py: {native.path} still says {what} after its edits and cuts: extend NATIVE")
    for g in native.gone:
        if g in code:
            sys.exit(f"build.py: {native.path} still has {g!r} after its edits: extend NATIVE's edits")
    lines = text.splitlines(keepends=True)
    at = len(lines)
    if native.at is not None:
        found = [i for i, line in enumerate(lines) if line.startswith(native.at)]
        if len(found) != 1:
            sys.exit(f"build.py: {native.path} has {len(found)} lines starting {native.at!r}, not 1")
        at = found[0]
    # A replaced function must exist before any statement names it as an object.
    for fn in {s.split("(")[0] for s in native.replaces}:
        if re.search(rf"^(COMMENT|GRANT|REVOKE|ALTER)\b[^;]*\b{fn}\s*\(", "".join(lines[:at]), re.M | re.I):
            sys.exit(f"build.py: {native.path} has a statement on {fn} before {name} defines it")
    if plain:
        dumps = len(CONFIG_DUMP.findall(text))
        if dumps != text.count("pg_extension_config_dump("):
            sys.exit(f"build.py: {native.path} calls pg_extension_config_dump otherwise than as one line each")
        lines = [line for line in lines if not CONFIG_DUMP.fullmatch(line)]
        at = len(lines) if native.at is None else [i for i, ln in enumerate(lines) if ln.startswith(native.at)][0]
    label = native_label(name, native)
    if native.at is None:
        return [(label, "".join(lines), True), (f"portable/src/{name}", source, False)]
    spliced = [
        f"-- ===== portable/src/{name} (build.py puts it here) =====\n",
        source.rstrip("\n") + "\n",
        f"-- ===== {native.path}, continued =====\n",
    ]
    return [(label, "".join(lines[:at] + spliced + lines[at:]), True)]


def pieces(plain: bool) -> list[tuple[str, str, bool]]:
    """The sources in order, as (label, text, native): a portable source that stands for a
    native file (NATIVE) comes with that file, edited and cut; native pieces name their objects
    unqualified, as CREATE EXTENSION runs them."""
    out = []
    for path in sources():
        if path.name in NATIVE:
            out += native_pieces(path.name, NATIVE[path.name], plain)
        else:
            out.append((f"portable/src/{path.name}", path.read_text(), False))
    return out


def self_test() -> None:
    """That NATIVE's records refuse what they do not fit: a native file in which an edit's text
    is missing or once more, that calls what must be gone or the native library, that lacks a
    replaced function or names it before the source; a source whose replacement lacks or
    changes the native header, or that defines another native function. And that the plain
    packaging has no pg_extension_config_dump() call, the extension's has the native file's;
    the portable source is in it once, before its line or after the native text."""
    failed = []
    for name, native in NATIVE.items():
        text = (ROOT / native.path).read_text()
        source = (HERE / "src" / name).read_text()
        refusals = 0

        def refused(what: str, mutant: str = text, mutant_source: str = source) -> None:
            nonlocal refusals
            refusals += 1
            try:
                native_pieces(name, native, True, mutant, mutant_source)
            except SystemExit:
                return
            failed.append(f"{native.path}: {what} built")

        for e in native.edits:
            refused(f"without one {e.old!r}", text.replace(e.old, "", 1))
            refused(f"with one more {e.old!r}", text + e.old)
        for g in native.gone:
            refused(f"calling {g!r}", text + f"\nSELECT {g}x;\n")
        refused("with a C function", text + "\nCREATE FUNCTION f(a int) RETURNS int AS 'MODULE_PATHNAME', 'f' LANGUAGE C;\n")
        theirs = routines(text)
        ours = routines(source)
        if native.replaces:
            # The native file's first function, defined again by the source but not listed.
            other = min((s for s in theirs if s not in native.replaces), key=lambda s: theirs[s][0])
            start, end, _ = theirs[other]
            refused(f"with {name} defining {other} too", mutant_source=source + "\n" + text[start:end] + "\n")
        for signature in native.replaces:
            fn = signature.split("(")[0]
            start, end, _ = theirs[signature]
            refused(f"without {signature}", text[:start] + text[end:])
            refused(f"with COMMENT ON {fn} first", f"COMMENT ON FUNCTION {signature} IS 'x';\n" + text)
            s_start, s_end, _ = ours[signature]
            head = source[s_start:s_end]
            cut = source[:s_start] + source[s_end:]
            refused(f"with {name} not defining {signature}", mutant_source=cut)
            changed = re.sub(r"\bRETURNS\s+\S+", "RETURNS bigint", head, count=1, flags=re.I)
            refused(f"with {name}'s {signature} returning bigint", mutant_source=source.replace(head, changed))
        plain = "".join(t for _, t, _ in native_pieces(name, native, True))
        tle = "".join(t for _, t, _ in native_pieces(name, native, False))
        dumps = text.count("pg_extension_config_dump(")
        if "pg_extension_config_dump(" in plain or tle.count("pg_extension_config_dump(") != dumps:
            failed.append(f"{native.path}: pg_extension_config_dump in the packagings")
        body = source.rstrip("\n")
        for packaging in (True, False):
            got = native_pieces(name, native, packaging)
            if native.at is None:
                ok = len(got) == 2 and got[1][1] == source and body not in got[0][1]
            else:
                piece = got[0][1]
                ok = (
                    len(got) == 1
                    and piece.count(body) == 1
                    and piece.split(body)[1].split("\n", 2)[2].startswith(native.at)
                )
            if not ok:
                where = "after the native text" if native.at is None else f"before {native.at!r}"
                failed.append(f"{native.path}: {name} is not in it once, {where}")
        where = "after it" if native.at is None else f"once before {native.at!r}"
        print(
            f"build.py --self-test: {native.path}: {refusals} broken copies refused, "
            f"{dumps} pg_extension_config_dump calls in the TLE only, {name} {where}"
        )
    if failed:
        sys.exit("build.py --self-test failed:\n" + "\n".join(failed))


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
        r"\set SHOW_CONTEXT never",
        r"\if :{?schema}",
        r"\else",
        *_plain_no_schema("give the schema to install into", f"pg_idgen_portable--{v}.sql"),
        r"\endif",
        r"\set QUIET on",
        "BEGIN;",
        "SET LOCAL search_path = pg_catalog, pg_temp;",
        "SET LOCAL idgen_portable.install_schema = :'schema';",
        # The guard's answer (_plain_stop_when_done): not a value the session, role or database had.
        "SET LOCAL idgen_portable.nothing_to_do = off;",
        *plain_schema_name_check(),
        "DO $pg_idgen_check$",
        "BEGIN",
        "    IF current_setting('server_version_num')::integer < 140000 THEN",
        "        RAISE EXCEPTION 'pg_idgen portable needs PostgreSQL 14 or later';",
        "    ELSIF current_setting('server_encoding') <> 'UTF8' THEN",
        "        RAISE EXCEPTION 'pg_idgen portable needs a UTF8 database';",
        "    END IF;",
        "END",
        "$pg_idgen_check$;",
        *plain_install_guard(v),
        'CREATE SCHEMA IF NOT EXISTS :"schema";',
    ]
    schema = "pg_catalog.quote_ident(pg_catalog.current_setting('idgen_portable.install_schema'))"
    for name, text, native in pieces(plain=True):
        if TAG in text:
            sys.exit(f"build.py: {name} contains {TAG}")
        # A native file creates its objects unqualified, as in CREATE EXTENSION: the install
        # schema first (pg_catalog is searched before it, not being named; pg_temp after).
        exec_lines = plain_exec(text)
        if native:
            exec_lines[2:2] = [f"    PERFORM pg_catalog.set_config('search_path', {schema} || ', pg_temp', true);"]
            exec_lines[-2:-2] = ["    PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);"]
        out += ["", f"-- ===== {name} =====", *exec_lines]
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
        f"\\echo 'pg_idgen portable {v} (plain SQL script): installed into schema' :schema",
        "",
    ]
    return "\n".join(out)


def tle_script(v: str) -> str:
    body = []
    extension = [
        (f"portable/{p.relative_to(HERE)}", p.read_text(), False)
        for p in sorted((HERE / "src" / "extension").glob("*.sql"))
    ]
    for name, text, _ in pieces(plain=False) + extension:
        if TLE_TAG in text:
            sys.exit(f"build.py: {name} contains {TLE_TAG}")
        body += [f"-- ===== {name} =====", text.rstrip("\n"), ""]
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


# ----- versions and upgrades ---------------------------------------------------------------
# The first version of the edition: every later one is reached from it by the chain of
# portable/src/upgrade/<from>--<to>.sql, written by hand as sql/upgrade/ is for native.
FIRST_VERSION = "0.7.0"
UPGRADE_NAME = re.compile(r"(\d+\.\d+\.\d+)--(\d+\.\d+\.\d+)\.sql")
SCHEMA_CHECK = "05_schema.sql"


def vkey(v: str) -> tuple[int, ...]:
    return tuple(int(part) for part in v.split("."))


def upgrade_sources(v: str, extra: list[pathlib.Path]) -> list[tuple[str, str, pathlib.Path, pathlib.Path | None]]:
    """(from, to, source, extension-only source or None) of every upgrade, in order.

    portable/src/upgrade/<from>--<to>.sql (and those of the --upgrades directories) is the
    upgrade; <dir>/extension/<from>--<to>.sql, when present, is appended to the TLE packaging
    only (pg_extension_config_dump of a new table, as src/extension/ is for the install).
    They must form one chain from FIRST_VERSION to the version built."""
    found: dict[tuple[str, str], tuple[pathlib.Path, pathlib.Path | None]] = {}
    for d in [HERE / "src" / "upgrade", *extra]:
        if not d.is_dir():
            if d in extra:
                sys.exit(f"build.py: --upgrades {d} is not a directory")
            continue
        names = set()
        for path in sorted(d.glob("*.sql")):
            m = UPGRADE_NAME.fullmatch(path.name)
            if not m:
                sys.exit(f"build.py: {path}: an upgrade is named <from>--<to>.sql (X.Y.Z versions)")
            frm, to = m.groups()
            if vkey(frm) >= vkey(to):
                sys.exit(f"build.py: {path}: {frm} is not older than {to}")
            if (frm, to) in found:
                sys.exit(f"build.py: two upgrades {frm}--{to}: {found[(frm, to)][0]} and {path}")
            for tag in (TAG, TLE_TAG):
                if tag in path.read_text():
                    sys.exit(f"build.py: {path} contains {tag}")
            ext = d / "extension" / path.name
            found[(frm, to)] = (path, ext if ext.is_file() else None)
            names.add(path.name)
        for ext in sorted((d / "extension").glob("*.sql")):
            if ext.name not in names:
                sys.exit(f"build.py: {ext} has no upgrade {d / ext.name}")
    chain = sorted(found, key=lambda pair: vkey(pair[0]))
    at = FIRST_VERSION
    for frm, to in chain:
        if frm != at:
            sys.exit(f"build.py: upgrade {frm}--{to} does not start where the chain is ({at}): one path, in order")
        at = to
    if at != v:
        sys.exit(
            f"build.py: no upgrade path from {at} to {v}: write portable/src/upgrade/{at}--{v}.sql "
            "(empty if the edition did not change), as sql/upgrade/ for native"
        )
    return [(frm, to, *found[(frm, to)]) for frm, to in chain]


def plain_exec(text: str) -> list[str]:
    """One source text run by the plain script, with @extschema@ replaced in the server."""
    return [
        "DO $pg_idgen_install$",
        "BEGIN",
        "    EXECUTE replace(" + TAG,
        text.rstrip("\n"),
        TAG + ", '@extschema@', quote_ident(current_setting('idgen_portable.install_schema')));",
        "END",
        "$pg_idgen_install$;",
    ]


# The installed edition in the schema given to the plain script (psql -v schema=...): its
# version when the schema holds one installed by the current role, else an error. Reading the
# version calls the schema's idgen_portable_version(), so only a function of the current
# role's is called. An extension pg_idgen (the TLE or native) in the schema is refused.
def _plain_find_installed(missing: str) -> str:
    return f"""DECLARE
    schema_name text := pg_catalog.current_setting('idgen_portable.install_schema');
    nsp pg_catalog.oid := (SELECT n.oid FROM pg_catalog.pg_namespace n WHERE n.nspname = schema_name);
    ext_version text;
    fn_owner pg_catalog.oid;
    installed text;
BEGIN
    IF nsp IS NULL THEN
        {missing}
    END IF;
    SELECT e.extversion INTO ext_version FROM pg_catalog.pg_extension e
     WHERE e.extname = '{NAME}' AND e.extnamespace = nsp;
    IF FOUND THEN
        RAISE EXCEPTION 'pg_idgen portable: schema % holds the extension {NAME} %', schema_name, ext_version
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'The plain script does not install over or upgrade an extension: update the TLE with '
                         'its pg_idgen_tle--<from>--<to>.sql scripts, then ALTER EXTENSION {NAME} UPDATE.';
    END IF;
    SELECT p.proowner INTO fn_owner FROM pg_catalog.pg_proc p
     WHERE p.pronamespace = nsp AND p.proname = 'idgen_portable_version' AND p.pronargs = 0;
    IF NOT FOUND THEN
        {missing}
    END IF;
    IF fn_owner <> (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = CURRENT_USER) THEN
        RAISE EXCEPTION 'pg_idgen portable: schema % holds pg_idgen portable installed by %, not by %',
                        schema_name, fn_owner::pg_catalog.regrole, CURRENT_USER
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'Run the script as the role that installed it.';
    END IF;
    EXECUTE pg_catalog.format('SELECT %I.idgen_portable_version()', schema_name) INTO installed;"""


def _plain_no_schema(what: str, script: str) -> list[str]:
    """Without -v schema: an error (exit status 3 under ON_ERROR_STOP), its message and hint."""
    return [
        "DO $pg_idgen_check$ BEGIN",
        f"    RAISE EXCEPTION 'pg_idgen portable: {what}' USING ERRCODE = 'invalid_parameter_value',",
        f"        HINT = 'psql -v schema=NAME -f {script}';",
        "END $pg_idgen_check$;",
    ]


def _plain_stop_when_done() -> list[str]:
    """After a guard that found nothing to do: end the script with exit status 0."""
    return [
        "SELECT coalesce(pg_catalog.current_setting('idgen_portable.nothing_to_do', true) = 'on', false)"
        " AS pg_idgen_nothing_to_do \\gset",
        r"\if :pg_idgen_nothing_to_do",
        "ROLLBACK;",
        r"\quit",
        r"\endif",
    ]


def plain_schema_name_check() -> list[str]:
    """The plain scripts' first step: the schema's name, put quoted into the sources' text where
    they say @extschema@ (in string literals and dollar-quoted bodies too), must not hold a
    character that could end one: refused with CREATE EXTENSION's words and SQLSTATE (22P02),
    which the TLE's CREATE EXTENSION gives for the same names."""
    return [
        "DO $pg_idgen_check$",
        "DECLARE",
        "    schema_name text := pg_catalog.current_setting('idgen_portable.install_schema');",
        "    bad text := '\"$''' || pg_catalog.chr(92); -- chr(92), a backslash: whatever standard_conforming_strings is",
        "BEGIN",
        "    IF pg_catalog.translate(schema_name, bad, '') <> schema_name THEN",
        "        RAISE EXCEPTION USING ERRCODE = 'invalid_text_representation',",
        f"            MESSAGE = 'invalid character in extension \"{NAME}\" schema: must not contain any of \"' || bad || '\"';",
        "    END IF;",
        "END",
        "$pg_idgen_check$;",
    ]


def plain_install_guard(v: str) -> list[str]:
    """The plain install's first step: over the same version it says so and does nothing (exit
    0, so a deployment may run it every time); over another version it refuses (42710) and
    names the upgrade scripts; over an extension pg_idgen in the schema it refuses (55000)."""
    return [
        "DO $pg_idgen_check$",
        _plain_find_installed("RETURN;"),
        f"    IF installed = '{v}' THEN",
        "        RAISE NOTICE 'pg_idgen portable % is already installed in schema %: nothing done', installed, schema_name;",
        "        PERFORM pg_catalog.set_config('idgen_portable.nothing_to_do', 'on', true);",
        "        RETURN;",
        "    END IF;",
        f"    RAISE EXCEPTION 'pg_idgen portable % is already installed in schema %; this script installs {v}',",
        "                    installed, schema_name",
        "        USING ERRCODE = 'duplicate_object',",
        "              HINT = CASE WHEN installed !~ '^[0-9]+[.][0-9]+[.][0-9]+$'"
        f" OR pg_catalog.string_to_array(installed, '.')::integer[] > '{{{v.replace('.', ',')}}}'::integer[]",
        "                          THEN 'There are no downgrades.'",
        "                          ELSE pg_catalog.format('Upgrade it instead: run pg_idgen_portable--%s--<next>.sql"
        f" and each next upgrade script up to {v}, in order, as here (psql -v schema=%s -f ...).',"
        " installed, schema_name) END;",
        "END",
        "$pg_idgen_check$;",
        *_plain_stop_when_done(),
    ]


def plain_upgrade_guard(frm: str, to: str) -> list[str]:
    """The plain upgrade's first step: the schema must hold <from> installed by the current role
    (else 42704, 55000, 42501 or 22023); over <to> it says so and
    does nothing, as ALTER EXTENSION UPDATE does."""
    missing = (
        "RAISE EXCEPTION 'pg_idgen portable is not installed in schema %', schema_name\n"
        "            USING ERRCODE = 'undefined_object',\n"
        f"                  HINT = 'Install it with pg_idgen_portable--{to}.sql.';"
    )
    return [
        "DO $pg_idgen_check$",
        _plain_find_installed(missing),
        f"    IF installed = '{to}' THEN",
        "        RAISE NOTICE 'pg_idgen portable % is already installed in schema %: nothing done', installed, schema_name;",
        "        PERFORM pg_catalog.set_config('idgen_portable.nothing_to_do', 'on', true);",
        f"    ELSIF installed IS DISTINCT FROM '{frm}' THEN",
        f"        RAISE EXCEPTION 'pg_idgen portable: schema % has version %; this script upgrades {frm} to {to}',",
        "                        schema_name, installed",
        "            USING ERRCODE = 'invalid_parameter_value',",
        "                  HINT = CASE WHEN installed ~ '^[0-9]+[.][0-9]+[.][0-9]+$' AND"
        f" pg_catalog.string_to_array(installed, '.')::integer[] < '{{{frm.replace('.', ',')}}}'::integer[]",
        f"                              THEN 'Run the upgrade scripts from ' || installed || ' to {frm} first, in order.'",
        "                              ELSE 'There are no downgrades.' END;",
        "    END IF;",
        "END",
        "$pg_idgen_check$;",
        *_plain_stop_when_done(),
    ]


def upgrade_pieces(frm: str, to: str, src: pathlib.Path, ext: pathlib.Path | None, tle: bool) -> list[tuple[str, str]]:
    """(title, text) of what an upgrade runs, in order, with @extschema@: the install's schema
    check; the version it starts from, and the edition's relations and functions before it;
    the hand-written upgrade (and, in the TLE, its extension-only part); the new
    idgen_portable_version(); then what the install's last step (99_privileges.sql) does, for
    the objects the upgrade created: grants that the installing role's default privileges gave
    to other roles are revoked, and no SECURITY DEFINER function is left executable by PUBLIC.
    Existing objects keep their grants (the owner's GRANTs to writers)."""
    before = f"""DO $pg_idgen_before$
BEGIN
    IF @extschema@.idgen_portable_version() OPERATOR(pg_catalog.<>) '{frm}' THEN
        RAISE EXCEPTION 'pg_idgen portable: schema @extschema@ has version %; this upgrade starts from {frm}',
                        @extschema@.idgen_portable_version()
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM pg_catalog.set_config('idgen_portable.upgrade_relations',
        (SELECT pg_catalog.array_agg(c.oid)::text FROM pg_catalog.pg_class c
          WHERE c.relnamespace = '@extschema@'::pg_catalog.regnamespace), true);
    PERFORM pg_catalog.set_config('idgen_portable.upgrade_functions',
        (SELECT pg_catalog.array_agg(p.oid)::text FROM pg_catalog.pg_proc p
          WHERE p.pronamespace = '@extschema@'::pg_catalog.regnamespace), true);
END
$pg_idgen_before$;"""
    after = """DO $pg_idgen_after$
DECLARE
    nsp pg_catalog.oid := '@extschema@'::pg_catalog.regnamespace::pg_catalog.oid;
    known_relations pg_catalog.oid[] := pg_catalog.current_setting('idgen_portable.upgrade_relations')::pg_catalog.oid[];
    known_functions pg_catalog.oid[] := pg_catalog.current_setting('idgen_portable.upgrade_functions')::pg_catalog.oid[];
    r record;
    left_over text;
BEGIN
    FOR r IN
        SELECT pg_catalog.format('%s ON %s %s', a.privilege_type,
                   CASE WHEN c.relkind = 'S' THEN 'SEQUENCE' ELSE 'TABLE' END, c.oid::pg_catalog.regclass) AS what,
               CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE a.grantee::pg_catalog.regrole::text END AS who
          FROM pg_catalog.pg_class c, pg_catalog.aclexplode(c.relacl) a
         WHERE c.relnamespace = nsp AND a.grantee <> c.relowner
           AND c.oid <> ALL (COALESCE(known_relations, '{}'))
        UNION ALL
        SELECT pg_catalog.format('EXECUTE ON FUNCTION %s', p.oid::pg_catalog.regprocedure),
               a.grantee::pg_catalog.regrole::text
          FROM pg_catalog.pg_proc p, pg_catalog.aclexplode(p.proacl) a
         WHERE p.pronamespace = nsp AND a.grantee <> p.proowner AND a.grantee <> 0
           AND p.oid <> ALL (COALESCE(known_functions, '{}'))
    LOOP
        EXECUTE pg_catalog.format('REVOKE %s FROM %s CASCADE', r.what, r.who);
    END LOOP;
    SELECT pg_catalog.string_agg(p.oid::pg_catalog.regprocedure::text, ', ') INTO left_over
      FROM pg_catalog.pg_proc p
     WHERE p.pronamespace = nsp AND p.prosecdef AND p.oid <> ALL (COALESCE(known_functions, '{}'))
       AND (p.proacl IS NULL OR EXISTS (SELECT FROM pg_catalog.aclexplode(p.proacl) a WHERE a.grantee = 0));
    IF left_over IS NOT NULL THEN
        RAISE EXCEPTION 'pg_idgen portable: the upgrade leaves SECURITY DEFINER functions executable by PUBLIC: %', left_over
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'A gate has EXECUTE revoked from PUBLIC (portable/README.md "Security"): REVOKE it in the upgrade.';
    END IF;
END
$pg_idgen_after$;"""
    check = HERE / "src" / SCHEMA_CHECK
    pieces = [
        (f"portable/src/{SCHEMA_CHECK} (the install schema's check)", check.read_text()),
        ("build.py: the version upgraded, the objects before", before),
        (f"{src}", src.read_text()),
    ]
    if tle and ext is not None:
        pieces.append((f"{ext}", ext.read_text()))
    pieces += [
        ("build.py: the version", version_function(to).replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION", 1)),
        ("build.py: the grants of the new objects", after),
    ]
    return pieces


def _shown(path_title: str) -> str:
    """A source's name as the generated files show it: relative to the repository if inside."""
    try:
        return str(pathlib.Path(path_title).resolve().relative_to(ROOT))
    except ValueError:
        return path_title


def plain_upgrade_script(frm: str, to: str, src: pathlib.Path, ext: pathlib.Path | None) -> str:
    out = [
        f"-- pg_idgen portable {frm} -> {to}: the plain SQL upgrade script. GENERATED by portable/build.py",
        f"-- from {_shown(str(src))}: edit that, then run python3 portable/build.py.",
        "--",
        f"-- Run as the role that installed pg_idgen portable {frm}, naming its schema:",
        f"--     psql -v schema=idgen -f pg_idgen_portable--{frm}--{to}.sql",
        f"-- One transaction. It refuses a schema that does not hold {frm}; over {to} it does nothing.",
        "-- See portable/README.md.",
        r"\set ON_ERROR_STOP on",
        r"\set SHOW_CONTEXT never",
        r"\if :{?schema}",
        r"\else",
        *_plain_no_schema("give the schema to upgrade", f"pg_idgen_portable--{frm}--{to}.sql"),
        r"\endif",
        r"\set QUIET on",
        "BEGIN;",
        "SET LOCAL search_path = pg_catalog, pg_temp;",
        "SET LOCAL idgen_portable.install_schema = :'schema';",
        # The guard's answer (_plain_stop_when_done): not a value the session, role or database had.
        "SET LOCAL idgen_portable.nothing_to_do = off;",
        *plain_schema_name_check(),
        *plain_upgrade_guard(frm, to),
    ]
    for title, text in upgrade_pieces(frm, to, src, ext, tle=False):
        out += ["", f"-- ===== {_shown(title)} =====", *plain_exec(text)]
    out += ["COMMIT;", f"\\echo 'pg_idgen portable {frm} -> {to} (plain SQL script): upgraded schema' :schema", ""]
    return "\n".join(out)


def tle_upgrade_script(frm: str, to: str, src: pathlib.Path, ext: pathlib.Path | None) -> str:
    body = []
    for title, text in upgrade_pieces(frm, to, src, ext, tle=True):
        body += [f"-- ===== {_shown(title)} =====", text.rstrip("\n"), ""]
    return "\n".join(
        [
            f"-- pg_idgen portable {frm} -> {to}: the pg_tle update path. GENERATED by portable/build.py",
            f"-- from {_shown(str(src))}: edit that, then run python3 portable/build.py.",
            "--",
            f"-- In each database where the TLE {NAME} is installed, as a member of pgtle_admin (with",
            "-- psql or any SQL client), then as the extension's owner:",
            f"--     psql -f pg_idgen_tle--{frm}--{to}.sql",
            f"--     ALTER EXTENSION {NAME} UPDATE;",
            f"-- It adds the path {frm} -> {to} and makes {to} the default version (CREATE EXTENSION",
            f"-- {NAME} then installs {frm} and updates it). See portable/README.md.",
            "BEGIN;",
            f"SELECT pgtle.install_update_path('{NAME}', '{frm}', '{to}',",
            TLE_TAG,
            *body,
            TLE_TAG,
            ");",
            f"SELECT pgtle.set_default_version('{NAME}', '{to}');",
            "COMMIT;",
            "",
        ]
    )


def targets_for(v: str, out: pathlib.Path, extra: list[pathlib.Path]) -> dict[pathlib.Path, str]:
    """Every generated file of version v: its two install scripts and two per upgrade."""
    targets = {
        out / f"pg_idgen_portable--{v}.sql": plain_script(v),
        out / f"pg_idgen_tle--{v}.sql": tle_script(v),
    }
    for frm, to, src, ext in upgrade_sources(v, extra):
        targets[out / f"pg_idgen_portable--{frm}--{to}.sql"] = plain_upgrade_script(frm, to, src, ext)
        targets[out / f"pg_idgen_tle--{frm}--{to}.sql"] = tle_upgrade_script(frm, to, src, ext)
    return targets


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--self-test", action="store_true", help="check that NATIVE's records refuse native files they do not fit")
    parser.add_argument("--check", action="store_true", help="fail when the files in --out differ from what the sources build")
    parser.add_argument("--version", help="build this version instead of the extension's (tests: a synthetic next version)")
    parser.add_argument("--upgrades", action="append", type=pathlib.Path, default=[], metavar="DIR",
                        help="another directory of <from>--<to>.sql upgrades (and extension/), besides portable/src/upgrade")
    parser.add_argument("--out", type=pathlib.Path, default=HERE / "dist", metavar="DIR", help="where to write (default portable/dist)")
    args = parser.parse_args()
    if args.self_test:
        self_test()
        return
    v = args.version or version()
    if not re.fullmatch(r"\d+\.\d+\.\d+", v):
        sys.exit(f"build.py: unexpected version {v!r}")
    out = args.out.resolve()
    targets = targets_for(v, out, [d.resolve() for d in args.upgrades])

    def shown(p: pathlib.Path) -> str:
        return str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else str(p)

    if args.check:
        stale = [p.name for p in out.glob("*.sql") if p not in targets]
        for target, text in targets.items():
            if not target.exists() or target.read_text() != text:
                sys.exit(f"build.py --check: {shown(target)} is not what its sources build; run python3 portable/build.py")
        if stale:
            sys.exit(f"build.py --check: stale files in {shown(out)}: {stale}")
        names = ", ".join(shown(t) for t in targets)
        print(f"build.py --check: {names} match their sources")
        return
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.sql"):
        if old not in targets:
            old.unlink()
    for target, text in targets.items():
        target.write_text(text)
        print(f"wrote {shown(target)}")


if __name__ == "__main__":
    main()
