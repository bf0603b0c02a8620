"""``gemv_int8`` on a few activation rows (XROWS) beside the path those rows took before it
(GPU machine): packed Q4_0's ``gemm_packed``, ``gemm_blocks`` or the float kernel, as
`gguf_matmul` routed them with `INT8_ROWS` empty. Sets `INT8_ROWS`: where gemv_int8 is faster.

    python benchmarks/gemv_rows.py [--formats Q4_0,Q4_K] [--rows 1,2,3,4] [--shapes 4096x4096]

Timing as benchmarks/gemm_packed.py's (CUPTI, median of three passes over weight copies that do
not fit in L2, kernel time alone). Checked first: both paths agree within bfloat16 rounding.
"""

from __future__ import annotations

import argparse
import importlib

import mlx.core as mx
import numpy as np
from gemm_packed import time_arm  # benchmarks/gemm_packed.py
from gguf import GGMLQuantizationType as Q
from kernels import random_blocks, weight_copies  # benchmarks/kernels.py

from vexel_core.gpu import on_cuda
from vexel_core.quant import kernels as quant_kernels
from vexel_core.quant.kernels import library
from vexel_core.quant.kernels.library import default_int8_tiling
from vexel_core.quant.kernels.packed import pack_q4_0

library_module = importlib.import_module("vexel_core.quant.kernels.library")

FORMATS = ["Q4_0", "Q8_0", "Q4_K", "Q5_K", "Q6_K"]
SHAPES = [(4096, 4096), (6144, 4096), (28672, 4096), (4096, 14336)]  # o, qkv, gate/up, down


def before(x: mx.array, w: mx.array, t: Q, packed: bool) -> mx.array:
    """`gguf_matmul` as it routed these rows before gemv_int8 took more than one."""
    saved = library_module.INT8_ROWS
    library_module.INT8_ROWS = {}
    try:
        return quant_kernels.gguf_matmul(x, w, t, packed=packed)
    finally:
        library_module.INT8_ROWS = saved


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--formats", default=",".join(FORMATS))
    ap.add_argument("--rows", default="1,2,3,4")
    ap.add_argument("--shapes", default=",".join(f"{n}x{k}" for n, k in SHAPES))
    args = ap.parse_args()
    if not on_cuda():
        raise SystemExit("gemv_rows.py needs MLX on CUDA")
    lib = library("cuda")
    print("format shape        M | int8 us  GB/s | before us  GB/s | before/int8", flush=True)
    for name in args.formats.split(","):
        t = Q[name]
        packed = t == Q.Q4_0  # the engine repacks Q4_0 on CUDA
        for shape in args.shapes.split(","):
            n, k = map(int, shape.split("x"))
            first = random_blocks(t, n, k)
            if packed:
                first = pack_q4_0(first)
            mx.eval(first)
            weights = weight_copies(first)
            for m in map(int, args.rows.split(",")):
                x = mx.random.normal((m, k)).astype(mx.bfloat16)
                # the tiling named: gemv's plans are cached by their arguments, INT8_ROWS not
                tiling = default_int8_tiling(t, k, m)
                ref = np.array(before(x, first, t, packed).astype(mx.float32))
                got = np.array(lib.gemv(x, first, t, tiling=tiling, packed=packed)
                               .astype(mx.float32))
                if np.abs(got - ref).max() > 2.0**-5 * np.abs(ref).max():
                    raise SystemExit(f"gemv_int8 differs from the path before: {name} {shape} {m}")
                int8 = time_arm(lambda w, x=x, t=t, tl=tiling, p=packed: lib.gemv(
                    x, w, t, tiling=tl, packed=p), weights)
                old = time_arm(lambda w, x=x, t=t, p=packed: before(x, w, t, p), weights)
                gbs = first.nbytes / 1e3
                print(f"{name:6} {shape:11} {m:3} | {int8:7.1f} {gbs / int8:5.0f}"
                      f" | {old:9.1f} {gbs / old:5.0f} | {old / int8:11.2f}", flush=True)
            del weights, first
            mx.clear_cache()


if __name__ == "__main__":
    main()
