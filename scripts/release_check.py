"""Checks that the places holding pg_idgen's version agree (run by the test command and by
scripts/pgxn_dist.sh; docs/RELEASING.md says how to cut a release).

  python3 scripts/release_check.py [ROOT]
  python3 scripts/release_check.py --bump X.Y.Z [ROOT]   # start the next version (docs/RELEASING.md)

- Cargo.toml's version V is the one place the version lives; pg_idgen.control's
  default_version is '@CARGO_VERSION@' (pgrx writes V there) or V itself.
- META.json is a valid PGXN META.json (meta spec 1.0.0: required keys and their types), its
  name is the extension's, and its version and provides.pg_idgen.version are V.
- CHANGELOG.md has a section for V: '## Unreleased V' while V is in progress, '## V' once
  released. Every released version has a section, newest first.
- The clients ship with the extension and carry its version: clients/python/pyproject.toml and
  the package's __version__, clients/rust/Cargo.toml (and its entry in Cargo.lock),
  clients/node/package.json (and package-lock.json), clients/java/pom.xml all say V. --bump moves them too.
- sql/: the newest upgrade script ends at V (sql/upgrade/pg_idgen--P--V.sql), every upgrade script
  goes from one version to a newer one, and from every frozen install script
  sql/released/pg_idgen--X.sql there is a chain of upgrade scripts to V. P, the version V upgrades from,
  is the newest released version, and it has its frozen install script. V itself has a frozen
  install script once released, and none while unreleased (pgrx generates V's script).
"""

import json
import re
import sys
from pathlib import Path

# The clients' places of the version: (file, a pattern whose one group is the version).
CLIENT_VERSIONS = (
    ("clients/python/pyproject.toml", r'^\[project\][^\[]*?^version = "([^"]+)"'),
    ("clients/python/src/pg_idgen/__init__.py", r'^__version__ = "([^"]+)"'),
    ("clients/rust/Cargo.toml", r'^\[package\][^\[]*?^version = "([^"]+)"'),
    ("Cargo.lock", r'^name = "pg-idgen-client"\nversion = "([^"]+)"'),
    ("clients/node/package.json", r'\A\{\n  "name": "pg-idgen",\n  "version": "([^"]+)"'),
    ("clients/node/package-lock.json", r'\A\{\n  "name": "pg-idgen",\n  "version": "([^"]+)"'),
    ("clients/node/package-lock.json", r'^    "": \{\n      "name": "pg-idgen",\n      "version": "([^"]+)"'),
    ("clients/java/pom.xml", r'^  <artifactId>pg-idgen</artifactId>\n  <version>([^<]+)</version>'),
)
SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z-]+)?$")


def key(version):
    return tuple(int(p) for p in version.split("-")[0].split("."))


def check(root):
    errors = []
    err = errors.append

    m = re.search(r'^\[package\][^\[]*?^version = "([^"]+)"', (root / "Cargo.toml").read_text(), re.M | re.S)
    if not m:
        return ["Cargo.toml: no [package] version"]
    v = m.group(1)
    if not SEMVER.match(v):
        err(f"Cargo.toml: version {v!r} is not X.Y.Z")

    control = (root / "pg_idgen.control").read_text()
    m = re.search(r"^default_version\s*=\s*'([^']*)'", control, re.M)
    if not m or m.group(1) not in ("@CARGO_VERSION@", v):
        err(f"pg_idgen.control: default_version must be '@CARGO_VERSION@' or '{v}'")

    # META.json against the PGXN meta spec 1.0.0.
    try:
        meta = json.loads((root / "META.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        meta = None
        err(f"META.json: {e}")
    if meta is not None:
        def want(k, types, where=meta, name=None):
            name = name or k
            if k not in where:
                err(f"META.json: {name} is missing")
                return None
            if not isinstance(where[k], types):
                err(f"META.json: {name} has the wrong type ({type(where[k]).__name__})")
                return None
            return where[k]
        for k in ("name", "abstract", "version"):
            want(k, str)
        if want("maintainer", (str, list)) is not None and isinstance(meta["maintainer"], list):
            if not meta["maintainer"] or not all(isinstance(x, str) and x for x in meta["maintainer"]):
                err("META.json: maintainer must be a string or a non-empty list of strings")
        lic = want("license", (str, list, dict))
        if isinstance(lic, str) and lic not in ("mit", "postgresql", "bsd", "apache_2_0", "gpl_3", "perl_5"):
            err(f"META.json: license {lic!r} is not one of the spec's names")
        spec = want("meta-spec", dict)
        if spec is not None and spec.get("version") != "1.0.0":
            err("META.json: meta-spec.version must be 1.0.0")
        if meta.get("name") != "pg_idgen":
            err("META.json: name must be pg_idgen")
        if meta.get("version") != v:
            err(f"META.json: version {meta.get('version')!r} is not Cargo.toml's {v}")
        provides = want("provides", dict)
        if provides is not None:
            ext = provides.get("pg_idgen")
            if not isinstance(ext, dict):
                err("META.json: provides.pg_idgen is missing")
            else:
                for k in ("file", "version"):
                    want(k, str, ext, f"provides.pg_idgen.{k}")
                if ext.get("version") != v:
                    err(f"META.json: provides.pg_idgen.version {ext.get('version')!r} is not {v}")
                for k in ("file", "docfile"):
                    if k in ext and not (root / ext[k]).is_file():
                        err(f"META.json: provides.pg_idgen.{k} {ext[k]!r} is not a file")
        for k, types in (("tags", list), ("prereqs", dict), ("resources", dict), ("description", str),
                         ("release_status", str), ("no_index", dict), ("generated_by", str)):
            if k in meta and not isinstance(meta[k], types):
                err(f"META.json: {k} has the wrong type")
        if "release_status" in meta and meta["release_status"] not in ("stable", "testing", "unstable"):
            err("META.json: release_status must be stable, testing or unstable")
        if not all(isinstance(t, str) and 0 < len(t) < 256 for t in meta.get("tags", [])):
            err("META.json: tags must be non-empty strings")
        for phase, rels in meta.get("prereqs", {}).items():
            if phase not in ("configure", "build", "test", "runtime", "develop"):
                err(f"META.json: prereqs phase {phase!r} is not in the spec")
            for rel in rels:
                if rel not in ("requires", "recommends", "suggests", "conflicts"):
                    err(f"META.json: prereqs relation {rel!r} is not in the spec")

        # The PostgreSQL versions PGXN says it runs on are the ones the tests run (scripts/lib.sh).
        lib = root / "scripts/lib.sh"
        m = re.search(r'^PG_VERSIONS="([0-9 ]+)"', lib.read_text(encoding="utf-8"), re.M) if lib.is_file() else None
        majors = sorted(int(x) for x in m.group(1).split()) if m else []
        want_pg = f">= {majors[0]}.0.0, < {majors[-1] + 1}.0.0" if majors else None
        got_pg = meta.get("prereqs", {}).get("runtime", {}).get("requires", {}).get("PostgreSQL")
        if got_pg != want_pg:
            err(f"META.json: prereqs.runtime.requires.PostgreSQL is {got_pg!r}, not {want_pg!r} (scripts/lib.sh PG_VERSIONS)")

    for path, pattern in CLIENT_VERSIONS:
        try:
            m = re.search(pattern, (root / path).read_text(encoding="utf-8"), re.M | re.S)
        except OSError as e:
            err(f"{path}: {e}")
            continue
        if not m:
            err(f"{path}: no version found where it should be ({pattern})")
        elif m.group(1) != v:
            err(f"{path}: version {m.group(1)!r} is not Cargo.toml's {v} (the clients carry the extension's version)")

    # CHANGELOG.md
    sections = []  # (version, released)
    path = root / "CHANGELOG.md"
    if not path.exists():
        err("CHANGELOG.md is missing")
    else:
        for line in path.read_text(encoding="utf-8").splitlines():
            m = re.match(r"^## (Unreleased )?\[?(\d+\.\d+\.\d+)\]?", line)
            if m:
                sections.append((m.group(2), m.group(1) is None))
        if not sections:
            err("CHANGELOG.md has no version sections (## X.Y.Z or ## Unreleased X.Y.Z)")
        elif sections[0][0] != v:
            err(f"CHANGELOG.md: the newest section is {sections[0][0]}, not Cargo.toml's {v}")
        if [s[0] for s in sections] != sorted((s[0] for s in sections), key=key, reverse=True):
            err("CHANGELOG.md: sections are not newest first")
        if any(not rel for ver, rel in sections if ver != v):
            err("CHANGELOG.md: only the current version may be Unreleased")
    released_v = bool(sections) and sections[0] == (v, True)
    released = [ver for ver, rel in sections if rel and ver != v]

    # sql/
    frozen, upgrades = set(), []
    for f in sorted((root / "sql").glob("*/pg_idgen--*.sql")) + sorted((root / "sql").glob("pg_idgen--*.sql")):
        where = f.parent.name
        parts = f.name[len("pg_idgen--"):-len(".sql")].split("--")
        if where == "released" and len(parts) == 1:
            frozen.add(parts[0])
        elif where == "upgrade" and len(parts) == 2:
            upgrades.append(tuple(parts))
        else:
            err(f"{f.relative_to(root)}: frozen install scripts are sql/released/pg_idgen--X.sql, "
                "upgrade scripts sql/upgrade/pg_idgen--X--Y.sql")
    for a, b in upgrades:
        if key(b) <= key(a):
            err(f"sql/upgrade/pg_idgen--{a}--{b}.sql goes backwards")
    if upgrades:
        newest = max(upgrades, key=lambda u: key(u[1]))
        if newest[1] != v:
            err(f"sql/: the newest upgrade script ends at {newest[1]}, not at Cargo.toml's {v}")
        into_v = [a for a, b in upgrades if b == v]
        if len(into_v) != 1:
            err(f"sql/: {len(into_v)} upgrade scripts end at {v}; there must be one")
        else:
            p = into_v[0]
            if p not in frozen:
                err(f"sql/released/pg_idgen--{p}.sql, the frozen install script of released {p}, is missing")
            if released and released[0] != p:
                err(f"CHANGELOG.md: the newest released version is {released[0]}, but {v} upgrades from {p}")
    else:
        err("sql/: no upgrade scripts")
    for x in frozen:
        seen, frontier = {x}, [x]
        while frontier:
            cur = frontier.pop()
            for a, b in upgrades:
                if a == cur and b not in seen:
                    seen.add(b)
                    frontier.append(b)
        if v not in seen and x != v:
            err(f"sql/: no chain of upgrade scripts from {x} to {v}")
    for ver in released:
        if ver not in frozen:
            err(f"sql/released/pg_idgen--{ver}.sql, the frozen install script of released {ver}, is missing")
    for x in frozen:
        if x != v and x not in released and sections:
            err(f"CHANGELOG.md has no section for {x}, which has a frozen install script")
    if released_v and v not in frozen:
        err(f"CHANGELOG.md calls {v} released, but sql/released/pg_idgen--{v}.sql (its frozen install script) is missing")
    if not released_v and v in frozen:
        err(f"sql/released/pg_idgen--{v}.sql exists, but CHANGELOG.md has {v} as Unreleased")
    return list(dict.fromkeys(errors)), v, released_v


def bump(root, new):
    """Starts version NEW after the released current one: Cargo.toml, Cargo.lock, META.json,
    the clients' versions, an upgrade script with only its header, and an '## Unreleased NEW'
    CHANGELOG section."""
    result = check(root)
    if isinstance(result, list) or result[0]:
        raise SystemExit("release check fails; fix that first:\n  - " + "\n  - ".join(result if isinstance(result, list) else result[0]))
    _, old, released = result
    if not released:
        raise SystemExit(f"{old} is not released yet (CHANGELOG.md: '## Unreleased {old}'); see docs/RELEASING.md")
    if not SEMVER.match(new) or key(new) <= key(old):
        raise SystemExit(f"{new!r} is not a version after {old}")
    cargo = root / "Cargo.toml"
    text = cargo.read_text()
    cargo.write_text(re.sub(r'^(\[package\][^\[]*?^version = ")[^"]+(")', rf"\g<1>{new}\g<2>", text, count=1, flags=re.M | re.S))
    lock = root / "Cargo.lock"
    lock.write_text(lock.read_text().replace(f'name = "pg_idgen"\nversion = "{old}"', f'name = "pg_idgen"\nversion = "{new}"', 1))
    for path, pattern in CLIENT_VERSIONS:
        f = root / path
        text = f.read_text(encoding="utf-8")
        m = re.search(pattern, text, re.M | re.S)
        f.write_text(text[:m.start(1)] + new + text[m.end(1):], encoding="utf-8")
    meta_path = root / "META.json"
    meta = meta_path.read_text(encoding="utf-8")
    meta_path.write_text(meta.replace(f'"version": "{old}"', f'"version": "{new}"'), encoding="utf-8")
    (root / "sql" / "upgrade" / f"pg_idgen--{old}--{new}.sql").write_text(
        f"-- pg_idgen {old} -> {new}.\n"
        f"\\echo Use \"ALTER EXTENSION pg_idgen UPDATE TO '{new}'\" to load this file. \\quit\n\n"
        f"-- Each object below is the same as in a fresh {new} install (sql/*.sql). Sections in the order\n"
        "-- the changes were made; every one names the file that defines its objects.\n")
    log = root / "CHANGELOG.md"
    text = log.read_text(encoding="utf-8")
    at = text.index("\n## ") + 1
    log.write_text(text[:at] + f"## Unreleased {new}\n\nWork in progress; the upgrade script "
                   f"`sql/upgrade/pg_idgen--{old}--{new}.sql` collects its SQL changes.\n\n" + text[at:], encoding="utf-8")
    print(f"version {new} begun after {old}: Cargo.toml, Cargo.lock, META.json, the clients, sql/upgrade/pg_idgen--{old}--{new}.sql, CHANGELOG.md")


def main():
    args = sys.argv[1:]
    if args and args[0] == "--bump":
        root = Path(args[2] if len(args) > 2 else Path(__file__).resolve().parent.parent)
        bump(root, args[1])
        args = args[2:]
    root = Path(args[0] if args else Path(__file__).resolve().parent.parent)
    result = check(root)
    if isinstance(result, list):
        errors, v, rel = result, "?", False
    else:
        errors, v, rel = result
    if errors:
        print("release check: the version's places disagree:", file=sys.stderr)
        for e in errors:
            print("  - " + e, file=sys.stderr)
        sys.exit(1)
    print(f"release check: {v} ({'released' if rel else 'unreleased'}): Cargo.toml, pg_idgen.control, "
          "META.json, the clients, CHANGELOG.md and the sql/ scripts agree")


if __name__ == "__main__":
    main()
