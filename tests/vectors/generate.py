#!/usr/bin/env python3
"""Writes xid12.json, rapkey.json and snowflake.json in this directory from what a running
pg_idgen server answers for the inputs below (README.md says what each file holds).

    python3 tests/vectors/generate.py "host=/var/tmp/pg_idgen/vec/sock port=54310 user=postgres"

needs psql on the PATH (or PSQL=...). Inputs only: every output, message and DETAIL is the
server's.
"""

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def lit(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def ask(conninfo: str, queries):
    """Runs each query (one row, one json column) in one session; the answers in order."""
    script = [
        r"\set ON_ERROR_STOP 1",
        "SET client_min_messages = warning;",
        "SET TIME ZONE 'UTC';",
        "CREATE EXTENSION IF NOT EXISTS pg_idgen;",
        """CREATE FUNCTION pg_temp.attempt(q text) RETURNS json LANGUAGE plpgsql AS $f$
DECLARE r json; m text; d text; s text;
BEGIN
  EXECUTE q INTO r;
  RETURN json_build_object('ok', r);
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS s = RETURNED_SQLSTATE, m = MESSAGE_TEXT, d = PG_EXCEPTION_DETAIL;
  RETURN json_build_object('sqlstate', s, 'message', m, 'detail', nullif(d, ''));
END $f$;""",
    ]
    for q in queries:
        script.append(f"SELECT pg_temp.attempt({lit(q)});")
    out = subprocess.run(
        [os.environ.get("PSQL", "psql"), "-X", "-At", "-v", "ON_ERROR_STOP=1", "-d", conninfo],
        input="\n".join(script) + "\n",
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    answers = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert len(answers) == len(queries), (len(answers), len(queries))
    return answers


def error_of(answer):
    assert "ok" not in answer, answer
    return {"message": answer["message"], "detail": answer["detail"]}


VALID_XID12 = [
    "9m4e2mr0ui3e8a215n4g",
    "9M4E2MR0UI3E8A215N4G",
    "00000000000000000000",
    "vvvvvvvvvvvvvvvvvvvg",
    "cpbf4n1ua7ni3bgvvvvg",
    "0000000000000000000g",
]

INVALID_XID12 = [
    "",
    "9m4e2mr0ui3e8a215n4",
    "9m4e2mr0ui3e8a215n4g0",
    "9m4e2mr0ui3e8a215n4w",
    "9m4e2mr0ui3e 8a215n4",
    "9m4e2mr0ui3e\n8a215n4",
    " 9m4e2mr0ui3e8a215n4g",
    "9m4e2mr0ui3e8a215n4g ",
    "\t9m4e2mr0ui3e8a215n4",
    "\u00a09m4e2mr0ui3e8a215n4",
    "9m4e2mr0ui3e8a215n4\u00e9",
    "\u00e9m4e2mr0ui3e8a215n4g",
    "000w00000000000000\u00e90",
    "\U0001f642" * 20,
    "9m4e2mr0ui3e8a215n41",
    "9m4e2mr0ui3e8a215n4v",
    "+9m4e2mr0ui3e8a215n4",
    "-9m4e2mr0ui3e8a215n4",
    "9m4e2mr0ui3e_8a215n4",
    "0x4e2mr0ui3e8a215n4g",
    "x" * 40,
    "x" * 41,
    "9m4e2mr0ui3e8a215n4g" * 3,
    "\u00e9" * 45,
]

INVALID_BYTES = ["", "00" * 11, "00" * 13, "ff" * 20]

# (unix seconds, machine hex, pid, counter)
PARTS = [
    (1300816219, "60f486", 58408, 4271561),
    (0, "000000", 0, 0),
    (4294967295, "ffffff", 65535, 16777215),
    (-1, "000000", 0, 0),
    (4294967296, "000000", 0, 0),
    (0, "00000000", 0, 0),
    (0, "0000", 0, 0),
    (0, "000000", 65536, 0),
    (0, "000000", -1, 0),
    (0, "000000", 0, 16777216),
    (0, "000000", 0, -1),
]


def xid12(conninfo):
    shown = "json_build_object('text', x::text, 'bytes', encode(x::bytea, 'hex'), " \
            "'unix_seconds', extract(epoch from xid12_time(x))::bigint, " \
            "'machine', encode(xid12_machine(x), 'hex'), 'pid', xid12_pid(x), " \
            "'counter', xid12_counter(x))"
    queries = [f"SELECT {shown} FROM (SELECT {lit(t)}::xid12 AS x) v" for t in VALID_XID12]
    queries += [f"SELECT {lit(t)}::xid12::text" for t in INVALID_XID12]
    queries += [f"SELECT decode({lit(b)}, 'hex')::xid12::text" for b in INVALID_BYTES]
    queries += [
        f"SELECT to_json(xid12_from_parts(to_timestamp({s}), decode({lit(m)}, 'hex'), {p}, {c})::text)"
        for s, m, p, c in PARTS
    ]
    answers = iter(ask(conninfo, queries))
    valid = []
    for t in VALID_XID12:
        v = next(answers)["ok"]
        valid.append({"input": t, **v})
    invalid_text = [{"text": t, **error_of(next(answers))} for t in INVALID_XID12]
    invalid_bytes = [{"bytes": b, **error_of(next(answers))} for b in INVALID_BYTES]
    parts = []
    for s, m, p, c in PARTS:
        a = next(answers)
        case = {"unix_seconds": s, "machine": m, "pid": p, "counter": c}
        if "ok" in a:
            case["text"] = a["ok"]
        else:
            case["message"] = a["message"]
        parts.append(case)
    return {
        "valid": valid,
        "invalid_text": invalid_text,
        "invalid_bytes": invalid_bytes,
        "parts": parts,
    }


VALID_BODIES = [
    "ord.cn.sh.202407.8842",
    "usr.cn.10001",
    "pay.us.ca.acme.202406.3311",
    "ord.cn.sh.202407.58",
    "ab.c",
    "abcdefgh.0",
    "inv.x9.2024.1",
    "ord." + "z" * 32,
    "sku.a.b.c.d.e",
]

INVALID_BODIES = [
    "",
    "ord",
    "ord.",
    "o.cn",
    "ordersxyz.a",
    "ord.cn..x",
    "ord.CN",
    "Ord.cn",
    "ord.a.b.c.d.e.f",
    "ord." + "a" * 33,
    "ord." + ".".join(["a" * 30] * 4) + ".abcdefghij",
    "ord.cn-2",
    "ord.c n",
    "ord.c\u00e9",
    "ord.cn\n",
    "or1.cn",
]

INVALID_KEYS = [
    "",
    "ord.cn.sh.202407.8842-3",
    "ord.cn.sh.202407.8842-",
    "ord.cn.sh.202407.8842",
    "ord.cn.sh.202407.8842-22",
    "ord.cn.sh.202407.8842-!",
    "ord.cn.sh.202407.8842-\u00e9",
    "ord-2",
    "o.cn-2",
    "ord.cn..8842-2",
    "ord.a.b.c.d.e.f-0",
    "ord.cn.sh.202407.8842-" + "x" * 50,
    "ord.c\u00e9.x-1",
    "ab." + "a" * 130 + "-0",
    "ord.c_n-2",
    "-2",
]

NORMALIZE = [
    " ORD.CN.SH.202407.8842-2 ",
    "\tUsr.Cn.10001-X\n",
    "ord.cn.sh.202407.8842-2",
    "   ",
    " ORD.CN.SH.202407.8842-3",
    "ORD.CN",
]

BUILD = [
    ("ord", ["cn", "sh", "202407", "8842"]),
    (" ORD", ["CN", " sh ", "202407", "8842"]),
    ("ord", ["cn", "s h"]),
    ("O1", ["cn"]),
    ("x", ["a"]),
    ("ord", []),
    ("ord", ["a", "b", "c", "d", "e", "f"]),
    ("ord", ["", "a"]),
    ("ord", ["a" * 40]),
    ("", ["a"]),
]

PREFIXES = ["ord", "ORD.cn.sh", " ord.cn ", "", "ord.", "ord.cn.", "o", "ord.cn!", "ord..x"]


def rapkey(conninfo):
    for k in INVALID_KEYS:
        assert k == k.strip().lower(), k
    queries = [f"SELECT to_json(rapkey_check_char({lit(b)}))" for b in VALID_BODIES]
    queries += [f"SELECT to_json(rapkey_check_char({lit(b)}))" for b in INVALID_BODIES]
    queries += [f"SELECT to_json(to_rapkey({lit(k)})::text)" for k in INVALID_KEYS]
    queries += [f"SELECT to_json(to_rapkey({lit(k)})::text)" for k in NORMALIZE]
    queries += [
        f"SELECT to_json(rapkey_build({lit(t)}, VARIADIC ARRAY[{', '.join(map(lit, s))}]::text[])::text)"
        for t, s in BUILD
    ]
    queries += [
        f"SELECT json_build_array(rapkey_prefix_lo({lit(p)}), rapkey_prefix_hi({lit(p)}))"
        for p in PREFIXES
    ]
    answers = iter(ask(conninfo, queries))
    valid = []
    for b in VALID_BODIES:
        c = next(answers)["ok"]
        valid.append({"body": b, "check": c, "key": f"{b}-{c}"})
    invalid_bodies = [{"body": b, **error_of(next(answers))} for b in INVALID_BODIES]
    invalid_keys = [{"key": k, **error_of(next(answers))} for k in INVALID_KEYS]

    def outcome(case, a, key):
        if "ok" in a:
            case[key] = a["ok"]
        else:
            case.update(error_of(a))
        return case

    normalize = [outcome({"input": i}, next(answers), "key") for i in NORMALIZE]
    build = [outcome({"type": t, "segments": s}, next(answers), "key") for t, s in BUILD]
    prefixes = [outcome({"prefix": p}, next(answers), "range") for p in PREFIXES]
    return {
        "valid": valid,
        "invalid_bodies": invalid_bodies,
        "invalid_keys": invalid_keys,
        "normalize": normalize,
        "build": build,
        "prefix_range": prefixes,
    }


SNOWFLAKE_IDS = [
    0,
    1,
    4095,
    4096,
    (1 << 22) - 1,
    1 << 22,
    1541815603606036480,
    (123456789 << 22) | (513 << 12) | 77,
    9223372036854775807,
]
BAD_SNOWFLAKE_IDS = [-1, -4194304, -9223372036854775808]


def snowflake(conninfo):
    queries = [
        "SELECT json_build_object('unix_ms', "
        f"(extract(epoch from snowflake_time({i}::bigint)) * 1000)::bigint, "
        f"'worker', snowflake_worker({i}::bigint), 'sequence', snowflake_sequence({i}::bigint))"
        for i in SNOWFLAKE_IDS
    ]
    queries += [f"SELECT to_json(snowflake_worker(({i})::bigint))" for i in BAD_SNOWFLAKE_IDS]
    queries.append("SELECT to_json(current_setting('pg_idgen.snowflake_epoch'))")
    answers = iter(ask(conninfo, queries))
    layouts = []
    for i in SNOWFLAKE_IDS:
        a = next(answers)["ok"]
        layouts.append({"id": i, "ms_since_epoch": i >> 22, **a})
    bad = [{"id": i, **error_of(next(answers))} for i in BAD_SNOWFLAKE_IDS]
    epoch = next(answers)["ok"]
    return {"epoch": epoch, "layouts": layouts, "invalid_ids": bad}


def write(name, doc):
    with open(os.path.join(HERE, name), "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, indent=1)
        f.write("\n")


def main():
    conninfo = sys.argv[1]
    write("xid12.json", xid12(conninfo))
    write("rapkey.json", rapkey(conninfo))
    write("snowflake.json", snowflake(conninfo))


if __name__ == "__main__":
    main()
