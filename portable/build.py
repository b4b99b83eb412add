#!/usr/bin/env python3
"""Builds pg_idgen's portable SQL edition from portable/src/*.sql, in two packagings.

    python3 portable/build.py          writes portable/dist/pg_idgen_portable--<version>.sql
                                       and portable/dist/pg_idgen_tle--<version>.sql, and for
                                       each portable/src/upgrade/<from>--<to>.sql
                                       portable/dist/pg_idgen_portable--<from>--<to>.sql and
                                       portable/dist/pg_idgen_tle--<from>--<to>.sql
    python3 portable/build.py --check  fails when the committed files differ from their source
    python3 portable/build.py --self-test  checks that the seam refuses a native file (or
                                       portable source) that does not fit it
    python3 portable/build.py --version 0.7.1 --upgrades DIR --out DIR
                                       (tests) builds a synthetic next version into DIR, with
                                       the upgrades of DIR besides portable/src/upgrade

The SQL is in .sql files: the sources (portable/src), the native files they stand for (sql/),
and the frames the packagings put them in (portable/frame: the plain scripts' guards, the TLE
statements, the upgrades' first and last steps). This file joins them; docs/portable.md says how.

One seam with the native edition (NATIVE): portable/src/50_registry_portable.sql stands for
sql/registry.sql, 60_backfill_portable.sql for sql/backfill.sql. The native file goes in as it
is, but for its edition blocks (lines "-- edition block NAME begin" ... "-- edition block NAME
end", each one small function), which are swapped for the portable source's blocks of the same
names; the portable source's text outside blocks (its own tables and helpers) goes just before
the native file's first block. Both must have the same blocks, each with the same CREATE line
(name, parameters, RETURNS); what the native file says outside its blocks may not need the
native library or what a managed service refuses (GONE). In the plain script the native
file's pg_extension_config_dump() calls, which only an extension's script may make, are left
out (the TLE keeps them).
"""

from __future__ import annotations

import argparse
import pathlib
import re
import sys

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
FRAME = HERE / "frame"
TAG = "$pg_idgen_src$"
TLE_TAG = "$_pgtle_$"
NAME = "pg_idgen"

# portable source -> the native file it stands for (its edition blocks swapped).
NATIVE = {"50_registry_portable.sql": "sql/registry.sql", "60_backfill_portable.sql": "sql/backfill.sql"}
# What a native file may say nowhere outside its edition blocks (comments aside): the native
# library, its settings, and what a managed service may refuse (the WAL, the control file).
GONE = ("MODULE_PATHNAME", "LANGUAGE C", "pg_control_system(", "pg_current_wal_lsn(", "pg_walfile_name(",
        "current_setting('pg_idgen.", "xid12_current_machine(", " pg_extension ")
BLOCK = re.compile(r"-- edition block (\w+) (begin|end)")
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


def frame(name: str, **values: str) -> str:
    """portable/frame/NAME without its --! notes, each @KEY@ replaced by its value."""
    lines = [line for line in (FRAME / name).read_text().splitlines(keepends=True) if not line.startswith("--!")]
    text = "".join(lines)
    for key, value in values.items():
        text = text.replace(f"@{key}@", value)
    return text


def fill(text: str, marker: str, pieces: str) -> str:
    """TEXT with its one line "-- @MARKER@" replaced by PIECES."""
    line = f"-- @{marker}@\n"
    if text.count(line) != 1:
        sys.exit(f"build.py: a frame has {text.count(line)} lines {line.strip()!r}, not 1")
    return text.replace(line, pieces.rstrip("\n") + "\n")


def blocks(text: str, where: str) -> tuple[dict[str, tuple[int, int]], list[str]]:
    """The edition blocks of TEXT: name -> (first line, line after the last), and its lines."""
    lines = text.splitlines(keepends=True)
    found: dict[str, tuple[int, int]] = {}
    open_at: tuple[str, int] | None = None
    for i, line in enumerate(lines):
        m = BLOCK.fullmatch(line.rstrip("\n"))
        if not m:
            if BLOCK.match(line):
                sys.exit(f"build.py: {where}:{i + 1}: an edition block line is '-- edition block NAME begin|end'")
            continue
        name, what = m.groups()
        if what == "begin" and open_at is None and name not in found:
            open_at = (name, i)
        elif what == "end" and open_at is not None and open_at[0] == name:
            found[name], open_at = (open_at[1], i + 1), None
        else:
            sys.exit(f"build.py: {where}:{i + 1}: edition block {name} {what} out of place (one begin, then its end)")
    if open_at is not None:
        sys.exit(f"build.py: {where}: edition block {open_at[0]} has no end")
    return found, lines


def header(lines: list[str], where: str, name: str) -> str:
    """A block's CREATE line, its schema-qualification aside: name, parameters, RETURNS."""
    heads = [line.replace("@extschema@.", "").strip() for line in lines if line.startswith("CREATE ")]
    if len(heads) != 1:
        sys.exit(f"build.py: {where}: edition block {name} creates {len(heads)} objects, not one function")
    return heads[0]


def native_piece(source_name: str, plain: bool, native: str | None = None, source: str | None = None) -> str:
    """The native file of portable/src/SOURCE_NAME (or NATIVE's text), its edition blocks
    swapped for the source's (or SOURCE's), the source's other text before the first block;
    in the plain script without pg_extension_config_dump() calls. Refuses what does not fit."""
    path = NATIVE[source_name]
    native = (ROOT / path).read_text() if native is None else native
    source = (HERE / "src" / source_name).read_text() if source is None else source
    theirs, lines = blocks(native, path)
    ours, src_lines = blocks(source, f"portable/src/{source_name}")
    if not theirs or set(theirs) != set(ours):
        sys.exit(f"build.py: {path} has the edition blocks {sorted(theirs)}, portable/src/{source_name} {sorted(ours)}")
    outside = [line for i, line in enumerate(lines) if not any(a <= i < b for a, b in theirs.values())]
    code = "".join(line.split("--")[0] + "\n" for line in outside)
    for what in GONE:
        if re.search(rf"(?<![\w.]){re.escape(what)}", code, re.I):
            sys.exit(f"build.py: {path} says {what!r} outside its edition blocks: put it in one")
    for name, (a, b) in theirs.items():
        mine = header(lines[a:b], path, name)
        if header(src_lines[ours[name][0] : ours[name][1]], source_name, name) != mine:
            sys.exit(f"build.py: portable/src/{source_name}'s edition block {name} is not native's: {mine}")
    own = [line for i, line in enumerate(src_lines) if not any(a <= i < b for a, b in ours.values())]
    first = min(a for a, _ in theirs.values())
    out = lines[:first] + [f"-- ===== portable/src/{source_name}: its own objects =====\n", "".join(own).strip("\n") + "\n",
                           f"-- ===== {path}, continued =====\n"]
    at = first
    for name, (a, b) in sorted(theirs.items(), key=lambda kv: kv[1]):
        out += lines[at:a] + src_lines[ours[name][0] : ours[name][1]]
        at = b
    text = "".join(out + lines[at:])
    if plain:
        if len(CONFIG_DUMP.findall(text)) != text.count("pg_extension_config_dump("):
            sys.exit(f"build.py: {path} calls pg_extension_config_dump otherwise than as one line each")
        text = CONFIG_DUMP.sub("", text)
    return text


def pieces(plain: bool) -> list[tuple[str, str, bool]]:
    """The sources in order, as (label, text, native)."""
    out = []
    for path in sources():
        if path.name in NATIVE:
            label = f"{NATIVE[path.name]} (native), its edition blocks from portable/src/{path.name}"
            out.append((label, native_piece(path.name, plain), True))
        else:
            out.append((f"portable/src/{path.name}", path.read_text(), False))
    return out


def self_test() -> None:
    """That the seam refuses what does not fit: a native file without a block, with one more,
    with a block not closed, or saying outside its blocks what is GONE; a portable block whose
    CREATE line differs. And that each portable block is in the result once, no native block
    is, the plain packaging has no pg_extension_config_dump() call and the TLE the native's."""
    failed = []
    for name, path in NATIVE.items():
        native = (ROOT / path).read_text()
        source = (HERE / "src" / name).read_text()
        theirs, lines = blocks(native, path)
        ours, src_lines = blocks(source, name)
        block = sorted(theirs)[0]
        a, b = theirs[block]
        sa, sb = ours[block]
        create = next(line for line in src_lines[sa:sb] if line.startswith("CREATE "))
        mutants = {
            f"without block {block}": (native.replace("".join(lines[a:b]), ""), source),
            "with one more block": (native + "-- edition block extra begin\nSELECT 1;\n-- edition block extra end\n", source),
            f"with block {block} not closed": (native.replace(lines[b - 1], ""), source),
            f"with portable block {block} returning another type": (
                native, source.replace(create, re.sub(r"RETURNS \w+", "RETURNS bigint[]", create))),
            **{f"calling {g!r} outside a block": (native + f"\nSELECT {g}x;\n", source) for g in GONE},
        }
        for what, (n, s) in mutants.items():
            try:
                native_piece(name, True, n, s)
            except SystemExit:
                continue
            failed.append(f"{path}: {what}: built")
        plain, tle = native_piece(name, True), native_piece(name, False)
        for key, (sa, sb) in ours.items():
            if plain.count("".join(src_lines[sa:sb])) != 1:
                failed.append(f"{path}: the portable block {key} is not in it once")
            a, b = theirs[key]
            if "".join(lines[a:b]) in plain:
                failed.append(f"{path}: the native block {key} is still in it")
        if "pg_extension_config_dump(" in plain or tle.count("pg_extension_config_dump(") != native.count("pg_extension_config_dump("):
            failed.append(f"{path}: pg_extension_config_dump in the packagings")
        print(f"build.py --self-test: {path}: {len(mutants)} broken copies refused, {len(ours)} edition blocks swapped")
    if failed:
        sys.exit("build.py --self-test failed:\n" + "\n".join(failed))


def comment() -> str:
    control = (ROOT / "pg_idgen.control").read_text()
    return re.search(r"^comment\s*=\s*'([^']*)'", control, re.M).group(1)


def array(v: str) -> str:
    return "{" + v.replace(".", ",") + "}"


def plain_exec(label: str, text: str, native: bool = False) -> str:
    """One source text as the plain scripts run it (portable/frame/plain_piece.sql)."""
    if TAG in text:
        sys.exit(f"build.py: {label} contains {TAG}")
    piece = frame("plain_piece.sql", LABEL=label)
    piece = "".join(line.replace(" -- @NATIVE@", "") for line in piece.splitlines(keepends=True)
                    if native or not line.endswith(" -- @NATIVE@\n"))
    return fill(piece, "TEXT", text)


def plain_script(v: str) -> str:
    body = "".join(plain_exec(label, text, native) for label, text, native in pieces(plain=True))
    out = fill(frame("plain_install.sql", VERSION=v, VERSION_ARRAY=array(v)), "PIECES", body)
    return fill(out, "VERSION_FUNCTION", frame("version.sql", VERSION=v))


def tle_body(items: list[tuple[str, str]]) -> str:
    out = []
    for label, text in items:
        if TLE_TAG in text:
            sys.exit(f"build.py: {label} contains {TLE_TAG}")
        out += [f"-- ===== {label} =====", text.rstrip("\n"), ""]
    return "\n".join(out)


def tle_script(v: str) -> str:
    extension = [(f"portable/{p.relative_to(HERE)}", p.read_text()) for p in sorted((HERE / "src" / "extension").glob("*.sql"))]
    items = [(label, text) for label, text, _ in pieces(plain=False)] + extension
    items.append(("build.py", frame("version.sql", VERSION=v)))
    description = comment().replace("'", "''") + " (portable SQL edition)"
    return fill(frame("tle_install.sql", VERSION=v, DESCRIPTION=description), "PIECES", tle_body(items))


def upgrade_pieces(frm: str, to: str, src: pathlib.Path, ext: pathlib.Path | None, tle: bool) -> list[tuple[str, str]]:
    """(title, text) of what an upgrade runs, in order, with @extschema@: the install's schema
    check; the version it starts from, and the edition's relations and functions before it;
    the hand-written upgrade (and, in the TLE, its extension-only part); the new version
    function; then the grants of the new objects (portable/frame/upgrade_after.sql)."""
    items = [
        (f"portable/src/{SCHEMA_CHECK} (the install schema's check)", (HERE / "src" / SCHEMA_CHECK).read_text()),
        ("portable/frame/upgrade_before.sql", frame("upgrade_before.sql", FROM=frm)),
        (_shown(str(src)), src.read_text()),
    ]
    if tle and ext is not None:
        items.append((_shown(str(ext)), ext.read_text()))
    return items + [("portable/frame/version.sql", frame("version.sql", VERSION=to)),
                    ("portable/frame/upgrade_after.sql", frame("upgrade_after.sql"))]


def plain_upgrade_script(frm: str, to: str, src: pathlib.Path, ext: pathlib.Path | None) -> str:
    body = "".join(plain_exec(title, text) for title, text in upgrade_pieces(frm, to, src, ext, tle=False))
    values = {"FROM": frm, "TO": to, "FROM_ARRAY": array(frm), "SOURCE": _shown(str(src))}
    return fill(frame("plain_upgrade.sql", **values), "PIECES", body)


def tle_upgrade_script(frm: str, to: str, src: pathlib.Path, ext: pathlib.Path | None) -> str:
    body = tle_body(upgrade_pieces(frm, to, src, ext, tle=True))
    return fill(frame("tle_upgrade.sql", FROM=frm, TO=to, SOURCE=_shown(str(src))), "PIECES", body)


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



def _shown(path_title: str) -> str:
    """A source's name as the generated files show it: relative to the repository if inside."""
    try:
        return str(pathlib.Path(path_title).resolve().relative_to(ROOT))
    except ValueError:
        return path_title



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
