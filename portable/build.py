#!/usr/bin/env python3
"""Builds pg_idgen's portable SQL edition from portable/src/*.sql, in two packagings.

    python3 portable/build.py          writes portable/dist/pg_idgen_portable--<version>.sql
                                       and portable/dist/pg_idgen_tle--<version>.sql
    python3 portable/build.py --check  fails when the committed files differ from their source

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

Native SQL files that the edition takes as they are (NATIVE below, issue #37: one definition of
each capability) go in just before the portable source that holds their replacements: the
functions listed are cut out of the native text (a comment line stays in their place) and that
source must define each of them with the native header (name, parameters, RETURNS). What is
left of the native text must need no native library. The native files name their objects
unqualified (CREATE EXTENSION puts the schema first on search_path); the plain script does the
same for their piece only.
"""

import pathlib
import re
import sys

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
TAG = "$pg_idgen_src$"
TLE_TAG = "$_pgtle_$"
NAME = "pg_idgen"

# portable source -> (native file it follows, the native functions it replaces). Why each is
# replaced: portable/README.md, "What differs from native".
NATIVE = {
    # A C function: arms PostgreSQL's statement timer for one batch.
    "60_backfill_portable.sql": ("sql/backfill.sql", ["idgen_statement_timeout(integer)"]),
}


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


def native_label(source: pathlib.Path) -> str:
    native, replaced = NATIVE[source.name]
    return f"{native} (native) without {', '.join(replaced)}: in portable/src/{source.name}"


def native_piece(source: pathlib.Path) -> tuple[str, str]:
    """(the native file's path, its text without the functions source replaces); checks that
    source defines each with the same header and that nothing left needs the native library."""
    native, replaced = NATIVE[source.name]
    text = (ROOT / native).read_text()
    ours = routines(source.read_text())
    theirs = routines(text)
    for signature in sorted(replaced, key=lambda s: -theirs.get(s, (0,))[0]):
        if signature not in theirs:
            sys.exit(f"build.py: {native} defines no {signature} (NATIVE, for {source.name})")
        if signature not in ours:
            sys.exit(f"build.py: {source.name} does not define {signature}, which it replaces")
        start, end, header = theirs[signature]
        if ours[signature][2] != header:
            sys.exit(f"build.py: {source.name}'s {signature} is not native's:\n  {ours[signature][2]}\n  {header}")
        text = f"{text[:start]}-- {signature}: the portable edition's is in portable/src/{source.name}{text[end:]}"
    for signature in sorted(set(ours) & set(theirs) - set(replaced)):
        sys.exit(f"build.py: {source.name} defines {signature} of {native}, which NATIVE does not list")
    for what in ("MODULE_PATHNAME", "LANGUAGE C", "pg_extension_config_dump"):
        if re.search(rf"(?<![\w.]){what}(?!\w)", text, re.I):
            sys.exit(f"build.py: {native} still says {what} without what {source.name} replaces")
    for name in {s.split("(")[0] for s in replaced}:
        if re.search(rf"^(COMMENT|GRANT|REVOKE|ALTER)\b[^;]*\b{name}\s*\(", text, re.M | re.I):
            sys.exit(f"build.py: {native} has a statement on {name} before {source.name} defines it")
    return native, text


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
    pieces = []
    for path in sources():
        if path.name in NATIVE:
            native, text = native_piece(path)
            pieces.append((native_label(path), text, True))
        pieces.append((f"portable/src/{path.name}", path.read_text(), False))
    for name, text, unqualified in pieces:
        if TAG in text:
            sys.exit(f"build.py: {name} contains {TAG}")
        # A native file creates its objects unqualified: the install schema first on the path.
        path_first = [
            "    PERFORM set_config('search_path', quote_ident(current_setting('idgen_portable.install_schema'))"
            " || ', pg_catalog, pg_temp', true);"
        ]
        out += [
            "",
            f"-- ===== {name} =====",
            "DO $pg_idgen_install$",
            "BEGIN",
            *(path_first if unqualified else []),
            "    EXECUTE replace(" + TAG,
            text.rstrip("\n"),
            TAG
            + ", '@extschema@', quote_ident(current_setting('idgen_portable.install_schema')));",
            *(["    PERFORM set_config('search_path', 'pg_catalog, pg_temp', true);"] if unqualified else []),
            "END",
            "$pg_idgen_install$;",
        ]
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
    for path in sources() + sorted((HERE / "src" / "extension").glob("*.sql")):
        pieces = [(f"portable/{path.relative_to(HERE)}", path.read_text())]
        if path.name in NATIVE and path.parent == HERE / "src":
            native, text = native_piece(path)
            pieces.insert(0, (native_label(path), text))
        for name, text in pieces:
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


def main() -> None:
    v = version()
    dist = HERE / "dist"
    targets = {
        dist / f"pg_idgen_portable--{v}.sql": plain_script(v),
        dist / f"pg_idgen_tle--{v}.sql": tle_script(v),
    }
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
