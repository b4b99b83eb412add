"""Keeps the upgrade script in progress equal to the living SQL files it copies.

An upgrade script cannot include another file, so sql/pg_idgen--P--V.sql holds copies of
objects defined in sql/*.sql. Each copy sits between two marker lines:

    -- >>> sql/registry.sql                                  the whole file
    -- <<< sql/registry.sql
    -- >>> sql/snowflake.sql idgen_check_cluster_identities  one function, as CREATE OR REPLACE
    -- <<< sql/snowflake.sql idgen_check_cluster_identities
    -- >>> sql/registry.sql idgen_writer_of(id xid12)        one of two of that name
    -- <<< sql/registry.sql idgen_writer_of(id xid12)

A function is copied from its `CREATE FUNCTION name(` line (the first of that name, or the one
whose line starts `CREATE FUNCTION name(args`) through the next `COMMENT ON FUNCTION name(`
statement; a procedure likewise, from `CREATE PROCEDURE name(` to `COMMENT ON PROCEDURE name(`. The test command runs this with --check (the copies must be current); --write
brings them up to date.

  python3 scripts/upgrade_sections.py --check|--write [ROOT]
"""

import re
import sys
from pathlib import Path

MARK = re.compile(r"^-- >>> (\S+)(?: (\w+(?:\([^)]*\))?))?$", re.M)


def section(root, path, function):
    text = (root / path).read_text()
    if function is None:
        return text
    lines = text.splitlines(keepends=True)
    # "name" is the first function of that name; "name(args)" the one whose CREATE line starts so.
    # A procedure the same way, from CREATE PROCEDURE to COMMENT ON PROCEDURE.
    name = function.split("(")[0]
    heads = [f"CREATE {what} {function}" if "(" in function else f"CREATE {what} {name}("
             for what in ("FUNCTION", "PROCEDURE")]
    start = next(i for i, line in enumerate(lines) if line.startswith(tuple(heads)))
    what = "PROCEDURE" if lines[start].startswith("CREATE PROCEDURE") else "FUNCTION"
    end = next(i for i, line in enumerate(lines) if i > start and line.startswith(f"COMMENT ON {what} {name}("))
    while not lines[end].rstrip().endswith(";"):  # a COMMENT that goes on to the next line
        end += 1
    body = "".join(lines[start:end + 1])
    return body.replace(f"CREATE {what}", f"CREATE OR REPLACE {what}", 1)


def regenerate(root, script):
    text = script.read_text()
    out, pos = [], 0
    for m in MARK.finditer(text):
        head = m.group(0)
        tail = head.replace("-- >>>", "-- <<<", 1)
        close = text.index("\n" + tail, m.end())
        out.append(text[pos:m.end()] + "\n")
        out.append(section(root, m.group(1), m.group(2)).rstrip("\n") + "\n")
        pos = close + 1
    out.append(text[pos:])
    return "".join(out)


def main(argv):
    mode = argv[1] if len(argv) > 1 else "--check"
    root = Path(argv[2]) if len(argv) > 2 else Path(__file__).resolve().parent.parent
    scripts = sorted((root / "sql" / "upgrade").glob("pg_idgen--*--*.sql"),
                     key=lambda p: [int(x) for x in p.name.split("--")[2][:-4].split(".")])
    script = scripts[-1]
    fresh = regenerate(root, script)
    if mode == "--write":
        script.write_text(fresh)
        print(f"upgrade sections: {script.name} written")
        return 0
    if fresh != script.read_text():
        print(f"upgrade sections: {script.name} differs from the files it copies; "
              "run python3 scripts/upgrade_sections.py --write", file=sys.stderr)
        return 1
    print(f"upgrade sections: {script.name} matches the files it copies")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
