"""A few activation rows times packed Q4_0 (GPU machine): ``gemm_packed`` (the tensor cores,
cuda/gemm_packed.cuh) in a few tilings, against the path it replaces (the float matrix-vector
kernel below 16 rows, the dequantized matrix and MLX's matmul from 16) and MLX's bf16 matmul on
the same shape, at Llama-3-8B's shapes and 2 to 16 rows (bf16). Below `GEMM_ROWS` (two rows)
the kernel is timed all the same, beside the float kernel that keeps them.

    python benchmarks/gemm_packed.py [--rows 2,4,8,16] [--shapes 4096x4096,...]

Each arm runs one product per weight copy (enough copies that none sits in L2), each evaluated
alone (no two products overlap), timed by CUPTI in three passes: the median pass's kernel time
a product (the old path's is its two launches from 16 rows), launch gaps and host time not
included. GB/s: the packed weight's bytes (4.5 bits a value) over that time; the copy
bandwidth of an H200 is ~3.7-3.8 TB/s (kernels.py measures it). Checked first: every tiling's
output equals the default's within bfloat16 rounding of the same sums.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import mlx.core as mx
import numpy as np
from gguf import GGMLQuantizationType as Q
from gpu_timeline import cupti_spans  # benchmarks/gpu_timeline.py
from kernels import random_blocks, weight_copies  # benchmarks/kernels.py

from vexel_core.gpu import on_cuda
from vexel_core.quant.kernels import library
from vexel_core.quant.kernels.library import GemmTiling, gemm_cta_rows
from vexel_core.quant.kernels.packed import pack_q4_0

SHAPES = [(4096, 4096), (6144, 4096), (28672, 4096), (4096, 14336)]  # o, qkv, gate/up, down
ROWS = [2, 4, 8, 16]
# (row warps, k warps, row tiles) against the default (1, 4, 1)
OTHER_TILINGS = {"2x4": (2, 4, 1), "4x2": (4, 2, 1), "2x4x2t": (2, 4, 2), "1x4x2t": (1, 4, 2),
                 "1x8x2t": (1, 8, 2)}


def time_arm(product: Callable[[mx.array], mx.array], weights: list[mx.array]) -> float:
    """GPU us of one product: the median of three passes' means over the weight copies (CUPTI;
    session 40 saw single passes 2-4x slow at random points)."""
    mx.eval(product(weights[0]))  # compiled

    def run() -> None:
        for w in weights:
            mx.eval(product(w))
    passes = []
    for _ in range(3):
        spans = cupti_spans(run)
        passes.append(sum(b - a for a, b, _, _ in spans) / len(weights))
    return sorted(passes)[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", default=",".join(map(str, ROWS)))
    ap.add_argument("--shapes", default=",".join(f"{n}x{k}" for n, k in SHAPES))
    args = ap.parse_args()
    if not on_cuda():
        raise SystemExit("gemm_packed.py needs MLX on CUDA")
    lib = library("cuda")
    print("shape        M | gemm us  GB/s | " + "  ".join(f"{n:>6}" for n in OTHER_TILINGS)
          + " | before us | bf16 us | before/gemm  bf16/gemm", flush=True)
    for shape in args.shapes.split(","):
        n, k = map(int, shape.split("x"))
        first = pack_q4_0(random_blocks(Q.Q4_0, n, k))
        mx.eval(first)
        weights = weight_copies(first)
        bf16 = [lib.dequantize(w, Q.Q4_0, mx.bfloat16, packed=True) for w in weights[:4]]
        mx.eval(weights, bf16)
        for m in map(int, args.rows.split(",")):
            x = mx.random.normal((m, k)).astype(mx.bfloat16)
            ref = np.array(lib.gemm_packed(x, first).astype(mx.float32))
            times = {"gemm": time_arm(lambda w, x=x: lib.gemm_packed(x, w), weights)}
            for name, (wn, wk, nt) in OTHER_TILINGS.items():
                tiling = GemmTiling(row_warps=wn, k_warps=wk, row_tiles=nt,
                                    rows=gemm_cta_rows(m))
                got = np.array(lib.gemm_packed(x, first, tiling=tiling).astype(mx.float32))
                if np.abs(got - ref).max() > 2.0**-7 * np.abs(ref).max():
                    raise SystemExit(f"{name} differs from the default at {shape}, M = {m}")
                times[name] = time_arm(lambda w, x=x, t=tiling: lib.gemm_packed(x, w, tiling=t),
                                       weights)
            if m < 16:
                before = time_arm(lambda w, x=x: lib.gemv(x, w, Q.Q4_0, packed=True), weights)
            else:
                before = time_arm(
                    lambda w, x=x: x @ lib.dequantize(w, Q.Q4_0, x.dtype, packed=True).T, weights)
            dense = time_arm(lambda w, x=x: x @ w.T, bf16)
            gemm = times["gemm"]
            print(f"{shape:11} {m:3} | {gemm:7.1f} {first.nbytes / gemm / 1e3:5.0f} | "
                  + "  ".join(f"{times[name]:6.1f}" for name in OTHER_TILINGS)
                  + f" | {before:9.1f} | {dense:7.1f} | {before / gemm:11.2f}  "
                  f"{dense / gemm:8.2f}", flush=True)


if __name__ == "__main__":
    main()
