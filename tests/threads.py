"""Helpers shared by the pytest suites (tests/client and tests/citus import it through their
conftest.py)."""
import threading


def run_concurrently(count: int, worker) -> None:
    """Runs worker(k) for k in 0..count on threads released together; raises their errors."""
    errors = []
    barrier = threading.Barrier(count)

    def run(k: int) -> None:
        try:
            barrier.wait()
            worker(k)
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
