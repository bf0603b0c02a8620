"""A pytest plugin for one device call (session 34): after every test, the split merge's
counts of 1..16 (sequence, KV head) pairs that are not zero, read before and after
``mx.synchronize()``. s34_b found ``_counters(1)`` holding a 1 after tests/test_engine.py on
the H200 (tests/test_kernel_arrays.py::test_the_split_merges_counts[1]): this says which test
leaves it, and whether it is a launch still running or a count left behind.
    PYTHONPATH=notes/device-jobs python3 -m pytest -p s34_counts_probe ...
"""
import os

import mlx.core as mx
import numpy as np

from vexel_core.attention import kernels as attention


def _nonzero() -> dict[int, list[int]]:
    out = {}
    for n in range(1, 17):
        a = np.array(attention._counters(n))
        if a.any():
            out[n] = [int(i) for i in np.flatnonzero(a)[:8]]
    return out


def pytest_runtest_teardown(item):  # type: ignore[no-untyped-def]
    if not os.environ.get("PROBE_EACH"):  # makes the counts early: set it for this alone
        return
    before = _nonzero()
    mx.synchronize()
    after = _nonzero()
    if before or after:
        print(f"\nCOUNTS {item.nodeid}: before sync {before}, after sync {after}", flush=True)


def pytest_sessionfinish(session, exitstatus):  # type: ignore[no-untyped-def]
    """At the end: fresh zeros of a few sizes, and then the counts of one pair (made here if no
    test made them), each read before and after a synchronize: a count left by our kernels
    shows in the second alone, a recycled buffer written after its fill in both."""
    for label, make in [("zeros(8)", lambda: mx.zeros((8,), mx.uint32)),
                        ("zeros(16)", lambda: mx.zeros((16,), mx.uint32)),
                        ("counters(1)", lambda: attention._counters(1))]:
        a = make()
        mx.eval(a)
        first = np.array(a).tolist()
        mx.synchronize()
        print(f"\nFRESH {label}: {first} then {np.array(a).tolist()}", flush=True)
