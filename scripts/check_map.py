"""Checks docs/DEVELOPMENT.md's map ("Where each capability lives") and its "Layout" table
against the tree: every file or directory they name in backticks must exist, so that a rename
or a move updates the map in the same change.

  python3 scripts/check_map.py [ROOT]
  python3 scripts/check_map.py --list [ROOT]     # each name with the path it resolves to

A name is checked when it looks like a path: it ends in a known extension, or in "/". Names
with wildcards or placeholders (X.Y.Z) are skipped. Each name is resolved against the
directories that its place in the table names, and must be found in exactly one of them:

- the column's directory in the map (docs `docs/`, core `crates/idgen-core/src/`, ...; in the
  tests column the directory of the word that starts the clause: "regress", "client", ...);
  in the layout, the row's path (a row marked ↳ is inside the row above it without the mark);
- the directory of the name that a parenthesis follows: `src/` (`lib.rs`) is src/lib.rs;
- the directory of the previous name in the same clause that has one: `xid12/mod.rs`,
  `io.rs` is xid12/io.rs;
- for a name with a "/" inside it, only those of them that have its first directory, and the
  repository's top when none has: `src/lib.rs` in the row of `crates/idgen-core/` is that
  crate's, not the extension's. A directory of one part (`sql/`) is never the top's.

A name found nowhere, or in two places (which one is meant cannot be told, and removing one
would leave the check passing), fails the check. tests/scripts/test_checks.py shows that
removing any file the map names makes it fail.
"""
import re
import subprocess
import sys
from pathlib import Path

EXTENSIONS = (".rs", ".py", ".sql", ".ts", ".mjs", ".json", ".spec", ".sh", ".toml", ".md", ".out", ".java", ".go", ".pgbench")
MAP, LAYOUT = "## Where each capability lives", "## Layout"
# The map's columns after the capability, and their directories ("" is the repository's top).
MAP_COLUMNS = {
    "docs": ["docs/", ""],
    "core": ["crates/idgen-core/src/"],
    "glue": ["src/"],
    "SQL": ["sql/"],
    "tests": [],
    "Python": ["clients/python/src/pg_idgen/"],
    "Rust": ["clients/rust/src/"],
    "TypeScript": ["clients/node/src/"],
    "portable": ["portable/", ""],
}
# In the tests column, the word that starts a clause names its directory.
TEST_WORDS = {
    "regress": ["tests/regress/sql/"],
    "isolation": ["tests/isolation/specs/"],
    "client": ["tests/client/"],
    "core": ["crates/idgen-core/src/", "crates/idgen-core/"],
}


def checked(name):
    if "*" in name or "<" in name or name.startswith("-") or re.search(r"X\.Y\.Z|A--B|P--V", name):
        return False
    return name.endswith(EXTENSIONS) or (name.endswith("/") and len(name) > 1)


def section(text, title):
    start = text.index(title)
    end = text.find("\n## ", start + len(title))
    return [line for line in text[start:end if end > 0 else None].splitlines() if line.startswith("|")]


def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def parent(path):
    """The directory of a resolved path: itself for a directory."""
    return path if path.endswith("/") else path[: path.rfind("/") + 1]


class Resolver:
    def __init__(self, files):
        self.files = set(files)
        self.dirs = {f[: i + 1] for f in self.files for i, ch in enumerate(f) if ch == "/"}

    def exists(self, path):
        return path in (self.dirs if path.endswith("/") else self.files)

    def cell(self, where, text, bases, words=None):
        """Yields (where, name, [paths it is found at]) for each checked name of one cell."""
        stack = [None]  # per parenthesis depth: the directory the parenthesis follows
        previous = [None]  # per depth: the directory of the clause's last name that has one
        last = None  # the last name's resolved directory, when the name has a "/"
        clause_bases = list(bases)
        for token in re.findall(r"`[^`]*`|[();]|[^`();]+", text):
            if token == "(":
                stack.append(last)
                previous.append(None)
                last = None
            elif token == ")":
                if len(stack) > 1:
                    stack.pop()
                    previous.pop()
                last = None
            elif token == ";":
                previous[-1] = None
                if len(stack) == 1 and words is not None:
                    clause_bases = list(bases)
            elif token.startswith("`"):
                name = token[1:-1].split(":")[0]  # file.rs:123
                if " " in name or not checked(name):
                    last = None
                    continue
                name = name.removeprefix("./")
                dirs = set(clause_bases) | {d for d in (stack[-1], previous[-1]) if d is not None}
                if "/" in name.rstrip("/"):
                    # Relative to those of the directories that have its first directory, or
                    # else to the repository's top.
                    first = name[: name.index("/") + 1]
                    dirs = {d for d in dirs if d and self.exists(d + first)} or {""}
                found = sorted({d + name for d in dirs if self.exists(d + name)})
                yield where, name, found
                last = parent(found[0]) if len(found) == 1 and "/" in name else None
                if last is not None:
                    previous[-1] = last
            elif words is not None and len(stack) == 1:
                word = token.strip().split(" ")[0] if token.strip() else ""
                if word in words:
                    clause_bases = list(words[word])

    def names(self, text):
        rows = section(text, MAP)
        header = cells(rows[0])
        for line in rows[2:]:
            row = cells(line)
            for column, cell in zip(header[1:], row[1:]):
                bases = MAP_COLUMNS[column]
                words = TEST_WORDS if column == "tests" else None
                yield from self.cell(f"map, {row[0]}, {column}", cell, bases, words)
        above = [""]
        for line in section(text, LAYOUT)[2:]:
            path_cell, what = cells(line)[:2]
            inside = path_cell.startswith("↳")
            bases = above if inside else [""]
            found_dirs = []
            for where, name, found in self.cell(f"layout, {path_cell}", path_cell, bases):
                yield where, name, found
                if len(found) == 1:
                    found_dirs.append(parent(found[0]))
            if not inside:
                above = found_dirs or [""]
            yield from self.cell(f"layout, {path_cell}", what, found_dirs or bases)


def problems(text, files):
    """The names of the map and the layout found nowhere or in two places."""
    out = []
    for where, name, found in Resolver(files).names(text):
        if not found:
            out.append(f"{where}: `{name}` does not exist")
        elif len(found) > 1:
            out.append(f"{where}: `{name}` could be any of {', '.join(found)}")
    return list(dict.fromkeys(out))


def tracked(root):
    listing = subprocess.run(["git", "-C", str(root), "ls-files", "--cached", "--others", "--exclude-standard"],
                             capture_output=True, text=True, check=True).stdout.split("\n")
    return [f for f in listing if f and (Path(root) / f).exists()]


def main(argv):
    args = argv[1:]
    listing = bool(args) and args[0] == "--list"
    args = args[1:] if listing else args
    root = Path(args[0]) if args else Path(__file__).resolve().parent.parent
    text = (root / "docs" / "DEVELOPMENT.md").read_text(encoding="utf-8")
    files = tracked(root)
    if listing:
        for where, name, found in Resolver(files).names(text):
            print(f"{where}: {name} -> {', '.join(found) or '(nothing)'}")
        return 0
    missing = problems(text, files)
    if missing:
        print("docs/DEVELOPMENT.md names what the tree does not have, or not one thing:\n  " + "\n  ".join(missing),
              file=sys.stderr)
        return 1
    print("docs/DEVELOPMENT.md: every path in the map and the layout exists, each in one place")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
