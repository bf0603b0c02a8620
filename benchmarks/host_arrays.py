"""What a GPU kernel pays to read an array the host made this step (a hypothesis to check).

    python benchmarks/host_arrays.py

On CUDA, MLX allocates arrays made from host data (larger than 8 bytes) in managed memory:
the host writes them, so their pages sit on the host until a kernel faults them over. An
engine step makes several such arrays (tokens, positions, slots, block tables, context
lengths, rows). Each timing evaluates `steps` small additions, each reading either a fresh
host-made array of `n` int32, one fresh host-made array sliced into eight views, or an
array already on the device; the difference per step is the cost of the faults.
"""

from __future__ import annotations

import time

import mlx.core as mx
import numpy as np


def per_step_us(kind: str, n: int, steps: int = 200) -> float:
    host = np.arange(n * 8, dtype=np.int32)
    device = mx.array(host) + 0
    mx.eval(device)
    t0 = time.perf_counter()
    for _ in range(steps):
        if kind == "eight fresh arrays":
            parts = [mx.array(host[i * n:(i + 1) * n]) for i in range(8)]
        elif kind == "one fresh array, eight views":
            packed = mx.array(host)
            parts = [packed[i * n:(i + 1) * n] for i in range(8)]
        else:
            parts = [device[i * n:(i + 1) * n] for i in range(8)]
        mx.eval([p + 1 for p in parts])
    return (time.perf_counter() - t0) / steps * 1e6


def main() -> None:
    print(f"MLX {mx.__version__} on {mx.default_device()}")
    for n in (64, 1024, 16384):
        row = {k: per_step_us(k, n) for k in
               ("eight fresh arrays", "one fresh array, eight views", "device array")}
        print(f"n={n:>6}: " + ", ".join(f"{k} {v:.1f} us" for k, v in row.items()))


if __name__ == "__main__":
    main()
