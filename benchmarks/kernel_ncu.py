"""A small workload for Nsight Compute (GPU machine): each product a few times, one evaluation
each, so that ``ncu`` reports the kernels' own times without MLX's per-operation cost.

    ncu --clock-control none --csv --metrics gpu__time_duration.sum,\\
        dram__throughput.avg.pct_of_peak_sustained_elapsed,\\
        sm__throughput.avg.pct_of_peak_sustained_elapsed python3 benchmarks/kernel_ncu.py

Runs the GGUF matrix-vector kernels at 1 and 8 activation rows for Q4_0, Q8_0, Q4_K and Q6_K
at 14336x4096 (one row: ``gemv_int8``, then the float kernel), and for Q4_0 also MLX's affine
product and bf16 product at one row, and dequantize + bf16 matmul at 512 rows
(notes/gpu-kernels.md has the figures). ``--formats`` picks the formats, ``--one-row``
skips the 8-row products, the affine and bf16 comparisons.
"""

from __future__ import annotations

import argparse

import mlx.core as mx
import numpy as np
from gguf import GGMLQuantizationType
from kernels import FORMATS, random_blocks  # benchmarks/kernels.py

from vexel_core.quant.kernels import library
from vexel_core.quant.kernels.library import INT8_TYPES, default_tiling


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--formats", default="Q4_0,Q8_0,Q4_K,Q6_K")
    ap.add_argument("--one-row", action="store_true")
    a = ap.parse_args()
    lib = library("cuda")
    for name in a.formats.split(","):
        t = GGMLQuantizationType[name]
        raw = random_blocks(t, 14336, 4096)
        mx.eval(raw)
        for m in (1,) if a.one_row else (1, 8):
            x = mx.random.normal((m, 4096)).astype(mx.bfloat16)
            for _ in range(3):
                mx.eval(lib.gemv(x, raw, t))
            if m == 1 and t in INT8_TYPES:
                for _ in range(3):
                    mx.eval(lib.gemv(x, raw, t, tiling=default_tiling("cuda", 1)))
        if name != "Q4_0" or a.one_row:
            continue
        w = FORMATS[name].load(np.array(raw), (14336, 4096))
        w16 = lib.dequantize(raw, t, mx.bfloat16)
        x = mx.random.normal((1, 4096)).astype(mx.bfloat16)
        for _ in range(3):
            mx.eval(w.affine_matmul(x))
            mx.eval(x @ w16.T)
        x = mx.random.normal((512, 4096)).astype(mx.bfloat16)
        for _ in range(2):
            mx.eval(x @ w16.T)
            mx.eval(lib.dequantize(raw, t, mx.bfloat16))


if __name__ == "__main__":
    main()
