"""The Python client's part of the cross-client interop check (tests/interop/run.sh).

  interop.py make DIR    writes DIR/python.ids: ids made here (Xid.new(), Snowflake(worker 1))
  interop.py read DIR    reads every DIR/*.ids, writes DIR/python.read: each id taken apart by
                         this client, then the ids in this client's order (tests/interop/README.md)
"""
import sys
from pathlib import Path

from pg_idgen import Snowflake, Xid, snowflake_sequence, snowflake_unix_ms, snowflake_worker

N = 300


def make(d: Path) -> None:
    flakes = Snowflake(1)
    lines = [f"x {Xid.new()}" for _ in range(N)] + [f"s {flakes.next_id()}" for _ in range(N)]
    (d / "python.ids").write_text("\n".join(lines) + "\n")


def read(d: Path) -> None:
    xids, flakes, out = [], [], []
    for f in sorted(d.glob("*.ids")):
        for kind, value in (ln.split() for ln in f.read_text().splitlines()):
            if kind == "x":
                x = Xid.from_str(value)
                xids.append(x)
                out.append(f"x {x} {x.unix_seconds} {int.from_bytes(x.machine, 'big')} {x.pid} {x.counter}")
            else:
                s = int(value)
                flakes.append(s)
                out.append(f"s {s} {snowflake_unix_ms(s)} {snowflake_worker(s)} {snowflake_sequence(s)}")
    out += [f"ox {x}" for x in sorted(xids)]  # an Xid orders as its text: byte order
    out += [f"os {s}" for s in sorted(flakes)]
    (d / "python.read").write_text("\n".join(out) + "\n")


if __name__ == "__main__":
    {"make": make, "read": read}[sys.argv[1]](Path(sys.argv[2]))
