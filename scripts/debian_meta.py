"""Writes the metadata of a pg_idgen .deb into its root directory (called by scripts/package.sh).

DEBIAN/control (Installed-Size is filled in by the caller), usr/share/doc/PKG/copyright
(machine-readable, the licence from LICENSE) and usr/share/doc/PKG/changelog.gz (a native
package's Debian changelog: this version's CHANGELOG.md section). Maintainer, descriptions and
licence come from META.json, the version from Cargo.toml (passed in).
"""

import argparse
import datetime
import email.utils
import gzip
import json
import re
import subprocess
import textwrap
from pathlib import Path


def commit_time(root):
    """The last commit's time (reproducible builds); the Cargo.toml's mtime outside git."""
    try:
        out = subprocess.run(["git", "-C", str(root), "log", "-1", "--format=%ct"],
                             capture_output=True, text=True, check=True).stdout.strip()
        if out:
            return int(out)
    except (OSError, subprocess.CalledProcessError):
        pass
    return int((root / "Cargo.toml").stat().st_mtime)


def changelog_sections(root, version):
    """[(version, [paragraph, ...])], newest first, from CHANGELOG.md ('## X.Y.Z' or
    '## Unreleased X.Y.Z'); one generic entry for VERSION when there is no CHANGELOG.md."""
    path = root / "CHANGELOG.md"
    if not path.exists():
        return [(version, [f"pg_idgen {version}."])]
    sections, current, para = [], None, None
    for line in path.read_text(encoding="utf-8").splitlines():
        m = re.match(r"^## (?:Unreleased )?\[?(\d+\.\d+\.\d+)\]?", line)
        if m:
            current = (m.group(1), [])
            sections.append(current)
            para = None
        elif current is None or line.startswith("#"):
            para = None
        elif line.startswith("- "):
            current[1].append(line[2:].strip())
            para = len(current[1]) - 1
        elif line.strip() and para is not None and line.startswith(" "):
            current[1][para] += " " + line.strip()
        elif line.strip() and para is None:
            current[1].append(line.strip())
            para = len(current[1]) - 1
        else:
            para = None
    return [(ver, items or [f"pg_idgen {ver}."]) for ver, items in sections]


def main():
    ap = argparse.ArgumentParser()
    for opt in ("root", "package", "major", "version", "arch", "depends", "dest"):
        ap.add_argument("--" + opt, required=True)
    a = ap.parse_args()
    root, dest = Path(a.root), Path(a.dest)
    meta = json.loads((root / "META.json").read_text(encoding="utf-8"))
    maintainer = meta["maintainer"][0] if isinstance(meta["maintainer"], list) else meta["maintainer"]
    when = commit_time(root)

    long_desc = "\n".join(" " + line for line in textwrap.wrap(meta["description"], 72))
    control = (
        f"Package: {a.package}\n"
        f"Source: pg-idgen\n"
        f"Version: {a.version}\n"
        f"Architecture: {a.arch}\n"
        f"Maintainer: {maintainer}\n"
        f"Installed-Size: 0\n"
        f"Depends: {a.depends}\n"
        f"Section: database\n"
        f"Priority: optional\n"
        f"Description: {meta['abstract'][0].lower() + meta['abstract'][1:]} ({a.major})\n"
        f"{long_desc}\n"
        f" .\n"
        f" This package is built for PostgreSQL {a.major}.\n"
    )
    (dest / "DEBIAN" / "control").write_text(control, encoding="utf-8")

    doc = dest / "usr" / "share" / "doc" / a.package
    doc.mkdir(parents=True, exist_ok=True)
    licence = (root / "LICENSE").read_text(encoding="utf-8")
    holder = re.search(r"^Copyright \(c\) (.+)$", licence, re.M).group(1)
    licence_body = licence.split("\n\n", 2)[2]  # after the title and the copyright line
    licence_lines = "\n".join(" " + (line if line.strip() else ".") for line in licence_body.strip().splitlines())
    (doc / "copyright").write_text(
        "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"
        f"Upstream-Name: {meta['name']}\n"
        f"Upstream-Contact: {maintainer}\n\n"
        "Files: *\n"
        f"Copyright: {holder}\n"
        "License: Expat\n\n"
        "License: Expat\n"
        f"{licence_lines}\n",
        encoding="utf-8",
    )

    # One entry, for this version: the project's CHANGELOG.md has no release dates to give
    # the older ones.
    date = email.utils.format_datetime(datetime.datetime.fromtimestamp(when, datetime.timezone.utc))
    items = dict(changelog_sections(root, a.version)).get(a.version)
    if items is None:
        raise SystemExit(f"CHANGELOG.md has no section for {a.version}")
    bullets = "\n".join(
        textwrap.fill(it, 78, initial_indent="  * ", subsequent_indent="    ") for it in items)
    entries = [f"{a.package} ({a.version}) unstable; urgency=medium\n\n{bullets}\n\n -- {maintainer}  {date}\n"]
    data = "\n".join(entries).encode("utf-8")
    with open(doc / "changelog.gz", "wb") as f:
        # mtime 0 and no file name: the same bytes on every build (gzip -9n).
        with gzip.GzipFile(filename="", mode="wb", fileobj=f, compresslevel=9, mtime=0) as gz:
            gz.write(data)


if __name__ == "__main__":
    main()
