"""The float matrix-vector kernel (cuda/kernels.cuh's gemv) alone at 1 and 2 activation rows,
beside ``gemm_blocks`` at the same rows (GPU machine). The float kernel takes two rows of every
format and one row of the formats without ``gemv_int8``; this times it for an A/B of its
header (run once per header, each with its own MLX_PTX_CACHE_DIR: MLX keys its PTX cache by
kernel name) and says whether ``gemm_blocks`` would beat it below its first row count.

    python benchmarks/gemv_float.py [--formats Q5_0,Q2_K] [--rows 1,2] [--shapes 4096x4096]

Timing as benchmarks/gemm_packed.py's (CUPTI, median of three passes over weight copies that do
not fit in L2, kernel time alone). Checked first: both kernels' outputs agree within bfloat16
rounding of the same sums.
"""

from __future__ import annotations

import argparse

import mlx.core as mx
import numpy as np
from gemm_packed import time_arm  # benchmarks/gemm_packed.py
from gguf import GGMLQuantizationType as Q
from kernels import random_blocks, weight_copies  # benchmarks/kernels.py

from vexel_core.gpu import on_cuda
from vexel_core.quant.kernels import library
from vexel_core.quant.kernels.library import default_tiling

FORMATS = ["Q4_0", "Q8_0", "Q4_K", "Q5_K", "Q6_K", "Q2_K", "Q3_K", "Q4_1", "Q5_0", "Q5_1"]
SHAPES = [(4096, 4096), (28672, 4096), (4096, 14336)]  # o, gate/up, down of Llama-3-8B


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--formats", default=",".join(FORMATS))
    ap.add_argument("--rows", default="1,2")
    ap.add_argument("--shapes", default=",".join(f"{n}x{k}" for n, k in SHAPES))
    args = ap.parse_args()
    if not on_cuda():
        raise SystemExit("gemv_float.py needs MLX on CUDA")
    lib = library("cuda")
    print("format shape        M | float us  GB/s | blocks us  GB/s | float/blocks", flush=True)
    for name in args.formats.split(","):
        t = Q[name]
        for shape in args.shapes.split(","):
            n, k = map(int, shape.split("x"))
            first = random_blocks(t, n, k)
            mx.eval(first)
            weights = weight_copies(first)
            for m in map(int, args.rows.split(",")):
                x = mx.random.normal((m, k)).astype(mx.bfloat16)
                tiling = default_tiling("cuda", m)  # the float kernel, as the engine tiles it
                ref = np.array(lib.gemv(x, first, t, tiling=tiling).astype(mx.float32))
                got = np.array(lib.gemm_blocks(x, first, t).astype(mx.float32))
                if np.abs(got - ref).max() > 2.0**-7 * np.abs(ref).max():
                    raise SystemExit(f"gemm_blocks differs from gemv: {name} {shape} {m}")
                gemv = time_arm(
                    lambda w, x=x, t=t, tl=tiling: lib.gemv(x, w, t, tiling=tl), weights)
                blocks = time_arm(lambda w, x=x, t=t: lib.gemm_blocks(x, w, t), weights)
                gbs = first.nbytes / 1e3
                print(f"{name:6} {shape:11} {m:3} | {gemv:8.1f} {gbs / gemv:5.0f}"
                      f" | {blocks:9.1f} {gbs / blocks:5.0f} | {gemv / blocks:12.2f}", flush=True)
            del weights, first
            mx.clear_cache()


if __name__ == "__main__":
    main()
