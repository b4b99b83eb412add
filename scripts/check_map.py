"""Checks docs/DEVELOPMENT.md's map ("Where each capability lives") and its "Layout" table
against the tree: every file or directory they name in backticks must exist, so that a rename
or a move updates the map in the same change.

  python3 scripts/check_map.py [ROOT]

A name is checked when it looks like a path: it ends in a known extension, or in "/". It may be
relative to the column's directory or to the repository (the map says which); it is found when
a tracked file's path ends with it. Names with wildcards or placeholders (X.Y.Z) are skipped.
"""
import re
import subprocess
import sys
from pathlib import Path

EXTENSIONS = (".rs", ".py", ".sql", ".ts", ".mjs", ".json", ".spec", ".sh", ".toml", ".md", ".out", ".java", ".go", ".pgbench")
SECTIONS = ("## Where each capability lives", "## Layout")


def names(text):
    for section in SECTIONS:
        start = text.index(section)
        end = text.find("\n## ", start + len(section))
        for line in text[start:end if end > 0 else None].splitlines():
            if line.startswith("|"):
                for name in re.findall(r"`([^`\s]+)`", line):
                    name = name.split(":")[0]  # file.rs:123
                    if "*" in name or "<" in name or name.startswith("-") or re.search(r"X\.Y\.Z|A--B|P--V", name):
                        continue
                    if name.endswith(EXTENSIONS) or (name.endswith("/") and len(name) > 1):
                        yield section, name


def main(argv):
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent.parent
    tracked = subprocess.run(["git", "-C", str(root), "ls-files", "--cached", "--others", "--exclude-standard"],
                             capture_output=True, text=True, check=True).stdout.split()
    files = ["/" + f for f in tracked]
    dirs = {d for f in files for d in ("/".join(f.split("/")[:i]) + "/" for i in range(2, f.count("/") + 1))}
    missing = []
    text = (root / "docs" / "DEVELOPMENT.md").read_text(encoding="utf-8")
    for section, name in names(text):
        tail = "/" + name.lstrip("./")
        pool = dirs if name.endswith("/") else files
        if not any(p.endswith(tail) for p in pool):
            missing.append(f"{section[3:]}: `{name}`")
    if missing:
        print("docs/DEVELOPMENT.md names what the tree does not have:\n  " + "\n  ".join(dict.fromkeys(missing)),
              file=sys.stderr)
        return 1
    print("docs/DEVELOPMENT.md: every path in the map and the layout exists")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
