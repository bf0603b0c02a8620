"""Host time per graph node by kind, on whatever device MLX runs (the H200 is the one that
matters): what one more operation in a decode step costs.

    python benchmarks/node_cost.py [--nodes 64] [--reps 200]

A decode step of one request is host-bound (notes/engine-gpu.md, sessions 8-9): its time is
about the number of nodes in its graph times a per-node cost, paid twice: once when the
compiled segments are replayed in Python's thread (`build`), once when MLX encodes them
(`mx.async_eval`, `submit`). For each kind of node this times a chain of --nodes of them,
compiled and eager, on a [1, 4096] bfloat16 row: build, submit, and the whole call until
the result is ready (`total`), in microseconds per node.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import mlx.core as mx

ROW = 4096


def _trivial_kernel() -> Callable[[mx.array], mx.array]:
    if mx.default_device() == mx.cpu or not mx.cuda.is_available():
        return lambda a: a + 1
    kernel = mx.fast.cuda_kernel(
        name="vx_node_cost", input_names=["x"], output_names=["y"],
        source="const size_t i = blockIdx.x * blockDim.x + threadIdx.x;\n"
               f"if (i < {ROW}) y[i] = x[i];\n")

    def call(a: mx.array) -> mx.array:
        return kernel(inputs=[a], template=[], grid=(ROW, 1, 1), threadgroup=(256, 1, 1),
                      output_shapes=[a.shape], output_dtypes=[a.dtype])[0]
    return call


def kinds() -> dict[str, Callable[[mx.array], mx.array]]:
    w = mx.ones((ROW,), dtype=mx.bfloat16)
    return {
        "reshape (view)": lambda a: a.reshape(1, 32, 128).reshape(1, ROW),  # two nodes
        "slice (view)": lambda a: mx.concatenate([a[:, 1:], a[:, :1]], axis=1),  # 3 nodes
        "add (elementwise)": lambda a: a + a,
        "rms_norm (MLX kernel)": lambda a: mx.fast.rms_norm(a, w, 1e-5),
        "custom kernel (copy)": _trivial_kernel(),
    }


NODES_PER_CALL = {"reshape (view)": 2, "slice (view)": 3}


def measure(fn: Callable[[mx.array], mx.array], x: mx.array, nodes: int, reps: int,
            compiled: bool) -> tuple[float, float, float]:
    def chain(a: mx.array) -> mx.array:
        for _ in range(nodes):
            a = fn(a)
        return a

    step = mx.compile(chain) if compiled else chain
    mx.eval(step(x))  # trace and compile
    build = submit = total = 0.0
    for _ in range(reps):
        t0 = time.perf_counter()
        y = step(x)
        t1 = time.perf_counter()
        mx.async_eval(y)
        t2 = time.perf_counter()
        mx.eval(y)
        t3 = time.perf_counter()
        build, submit, total = build + t1 - t0, submit + t2 - t1, total + t3 - t0
    return build / reps, submit / reps, total / reps


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=64, help="calls of each kind per chain")
    ap.add_argument("--reps", type=int, default=200)
    args = ap.parse_args()
    x = mx.random.normal((1, ROW)).astype(mx.bfloat16)
    mx.eval(x)
    print(f"device {mx.default_device()}; us per node (build / submit / total)")
    for name, fn in kinds().items():
        n = args.nodes * NODES_PER_CALL.get(name, 1)
        cells = []
        for compiled in (True, False):
            b, s, t = measure(fn, x, args.nodes, args.reps, compiled)
            cells.append(f"{1e6 * b / n:5.2f} / {1e6 * s / n:5.2f} / {1e6 * t / n:5.2f}")
        print(f"{name:24s} compiled {cells[0]}   eager {cells[1]}")


if __name__ == "__main__":
    main()
