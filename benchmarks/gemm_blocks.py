"""A few activation rows times a format's own blocks (GPU machine): ``gemm_blocks`` (the tensor
cores, cuda/gemm_blocks.cuh) at its default tiling and a few others, against the path it
replaces (the float matrix-vector kernel below 16 rows, the dequantized matrix and MLX's matmul
at 16) and MLX's bf16 matmul on the same shape, at Llama-3-8B's shapes and 2 to 16 rows (bf16).

    python benchmarks/gemm_blocks.py [--formats Q4_K,Q6_K,Q8_0] [--rows 2,8,16] [--shapes ...]

Timing as benchmarks/gemm_packed.py's (`time_arm`: CUPTI, median of three passes over weight
copies that do not fit in L2, kernel time alone). GB/s: the blocks' bytes over that time (the
H200's copy bandwidth is ~3.7-3.8 TB/s). Checked first: every tiling's output equals the
default's within bfloat16 rounding of the same sums.
"""

from __future__ import annotations

import argparse

import mlx.core as mx
import numpy as np
from gemm_packed import SHAPES, time_arm  # benchmarks/gemm_packed.py
from gguf import GGMLQuantizationType as Q
from kernels import random_blocks, weight_copies  # benchmarks/kernels.py

from vexel_core.gpu import on_cuda
from vexel_core.quant.kernels import KernelLibrary, library
from vexel_core.quant.kernels.library import BlocksTiling, gemm_cta_rows

FORMATS = ["Q4_K", "Q6_K", "Q8_0"]
ROWS = [2, 8, 16]
# (k warps, stages)
OTHER_TILINGS = {"4w2s": (4, 2), "2w4s": (2, 4), "4w1s": (4, 1), "2w2s": (2, 2)}


def shape_rows(lib: KernelLibrary, t: Q, n: int, k: int, rows: list[int]) -> None:
    """Print the table's lines for format *t* at *n* x *k*, one per activation-row count."""
    first = random_blocks(t, n, k)
    mx.eval(first)
    weights = weight_copies(first)
    bf16 = [lib.dequantize(w, t, mx.bfloat16) for w in weights[:4]]
    mx.eval(weights, bf16)
    for m in rows:
        x = mx.random.normal((m, k)).astype(mx.bfloat16)
        ref = np.array(lib.gemm_blocks(x, first, t).astype(mx.float32))
        times = {"gemm": time_arm(lambda w, x=x: lib.gemm_blocks(x, w, t), weights)}
        for name, (wk, stages) in OTHER_TILINGS.items():
            tiling = BlocksTiling(k_warps=wk, stages=stages, rows=gemm_cta_rows(m))
            got = np.array(lib.gemm_blocks(x, first, t, tiling=tiling).astype(mx.float32))
            if np.abs(got - ref).max() > 2.0**-7 * np.abs(ref).max():
                raise SystemExit(f"{name} differs from the default: {t.name} {n}x{k} {m}")
            times[name] = time_arm(
                lambda w, x=x, tl=tiling: lib.gemm_blocks(x, w, t, tiling=tl), weights)
        if m < 16:
            before = time_arm(lambda w, x=x: lib.gemv(x, w, t), weights)
        else:
            before = time_arm(lambda w, x=x: x @ lib.dequantize(w, t, x.dtype).T, weights)
        dense = time_arm(lambda w, x=x: x @ w.T, bf16)
        gemm = times["gemm"]
        print(f"{t.name:6} {f'{n}x{k}':11} {m:3} | {gemm:7.1f} {first.nbytes / gemm / 1e3:5.0f}"
              " | " + "  ".join(f"{times[name]:6.1f}" for name in OTHER_TILINGS)
              + f" | {before:9.1f} | {dense:7.1f} | {before / gemm:11.2f}  {dense / gemm:8.2f}",
              flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--formats", default=",".join(FORMATS))
    ap.add_argument("--rows", default=",".join(map(str, ROWS)))
    ap.add_argument("--shapes", default=",".join(f"{n}x{k}" for n, k in SHAPES))
    args = ap.parse_args()
    if not on_cuda():
        raise SystemExit("gemm_blocks.py needs MLX on CUDA")
    lib = library("cuda")
    print("format shape        M | gemm us  GB/s | " + "  ".join(f"{n:>6}" for n in OTHER_TILINGS)
          + " | before us | bf16 us | before/gemm  bf16/gemm", flush=True)
    for fmt in args.formats.split(","):
        for shape in args.shapes.split(","):
            n, k = map(int, shape.split("x"))
            shape_rows(lib, Q[fmt], n, k, [int(m) for m in args.rows.split(",")])


if __name__ == "__main__":
    main()
