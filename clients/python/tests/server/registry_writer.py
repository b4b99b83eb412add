"""A writer process for clients/python/tests/server/test_registry.py: makes ids from a grant-bound generator
of pg_idgen.Registry and writes them to a file, one per line ("id VALUE"), flushed after every
batch; "grant GRANT_ID SLOT" whenever it uses a new grant; at the end "error CLASS MESSAGE" if
the generator raised, then "end". It runs until --seconds have passed on the monotonic clock
(0: until killed).

Under libfaketime (the clock tests) time.sleep fails with EINVAL (libfaketime 0.9.10 with
FAKETIME_DONT_FAKE_MONOTONIC=1 breaks clock_nanosleep), so every wait here, and the
Registry's, goes through select() instead.
"""
import argparse
import select
import sys
import time

import pg_idgen


def sleep(seconds: float) -> None:
    select.select([], [], [], max(seconds, 0))


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--dsn", required=True)
    p.add_argument("--writer", required=True)
    p.add_argument("--kind", choices=["snowflake", "xid12"], default="snowflake")
    p.add_argument("--lease", default="3 seconds")
    p.add_argument("--out", required=True)
    p.add_argument("--seconds", type=float, default=5.0)
    p.add_argument("--batch", type=int, default=20)
    p.add_argument("--pause", type=float, default=0.01)
    a = p.parse_args()
    with open(a.out, "w") as out:
        status = 0
        with pg_idgen.Registry(a.dsn, writer=a.writer, sleep=sleep) as reg:
            try:
                gen = reg.snowflake(a.lease) if a.kind == "snowflake" else reg.xid12(a.lease)
                grant = None
                end = time.monotonic() + a.seconds
                while a.seconds <= 0 or time.monotonic() < end:
                    lines = []
                    for _ in range(a.batch):
                        v = gen.next_id() if a.kind == "snowflake" else gen.new()
                        if gen.grant is not grant and (grant is None or gen.grant.grant_id != grant.grant_id):
                            lines.append(f"grant {gen.grant.grant_id} {gen.grant.slot}\n")
                        grant = gen.grant
                        lines.append(f"id {v}\n")
                    out.write("".join(lines))
                    out.flush()
                    sleep(a.pause)
            except (pg_idgen.RegistryError, pg_idgen.SnowflakeClockError) as e:
                out.write(f"error {type(e).__name__} {e}\n")
                status = 3
        out.write("end\n")
    return status


if __name__ == "__main__":
    sys.exit(main())
