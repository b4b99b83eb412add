"""A writer process for clients/python/tests/server/test_registry_link_cut.py, run inside a
network namespace: makes Snowflake ids from a grant-bound generator and writes to a file, flushed
after every batch,

- "id VALUE" for every id;
- "grant GRANT_ID SLOT" whenever it uses a new grant;
- "error MONO SECONDS CLASS MESSAGE" when next_id() raised (MONO: time.monotonic() when the call
  started, SECONDS: how long it took); it then pauses and goes on;
- "slow MONO SECONDS" for a call that returned an id but took longer than 0.2 s;
- "lag SECONDS" whenever the longest lateness seen so far of a thread's 50 ms sleeps beside the
  calls grows (the machine's scheduling delay in this run: the test adds it to its bounds);
- "closing MONO" and "closed SECONDS" (how long close() took) when the stop file appears, then
  "end".

CLOCK_MONOTONIC is the machine's, not the namespace's: the test compares these times with its own.
"""
import argparse
import os
import sys
import threading
import time

import pg_idgen


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--dsn", required=True)
    p.add_argument("--writer", required=True)
    p.add_argument("--lease", default="3 seconds")
    p.add_argument("--out", required=True)
    p.add_argument("--stop", required=True, help="stop (close the registry) when this file exists")
    p.add_argument("--timeout", type=float, default=2.0)
    a = p.parse_args()
    mono = time.monotonic
    lag = [0.0]

    def probe() -> None:
        while True:
            t = mono()
            time.sleep(0.05)
            lag[0] = max(lag[0], mono() - t - 0.05)

    threading.Thread(target=probe, daemon=True).start()
    written_lag = 0.0
    with open(a.out, "w", buffering=1) as out:
        reg = pg_idgen.Registry(a.dsn, writer=a.writer, timeout=a.timeout)
        gen = reg.snowflake(a.lease)
        grant = None
        while not os.path.exists(a.stop):
            lines = []
            for _ in range(20):
                started = mono()
                try:
                    v = gen.next_id()
                except pg_idgen.RegistryError as e:
                    took = mono() - started
                    lines.append(f"error {started:.3f} {took:.3f} {type(e).__name__} {e}\n")
                    out.write("".join(lines))
                    lines = []
                    time.sleep(0.05)
                    break
                took = mono() - started
                if took > 0.2:
                    lines.append(f"slow {started:.3f} {took:.3f}\n")
                g = gen.grant
                if grant is None or g.grant_id != grant.grant_id:
                    lines.append(f"grant {g.grant_id} {g.slot}\n")
                    grant = g
                lines.append(f"id {v}\n")
            if lag[0] > written_lag:
                written_lag = lag[0]
                lines.append(f"lag {written_lag:.3f}\n")
            out.write("".join(lines))
            time.sleep(0.01)
        started = mono()
        out.write(f"closing {started:.3f}\n")
        reg.close()
        closed = mono() - started
        out.write(f"lag {lag[0]:.3f}\nclosed {closed:.3f}\n")
        out.write("end\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
