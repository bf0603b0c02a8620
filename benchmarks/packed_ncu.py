"""One row of Q4_0 on x rounded beforehand, repacked (``gemv_packed``) beside ``gemv_int8`` on
the file's blocks, for Nsight Compute (GPU machine):

    ncu --clock-control none --kernel-name regex:vx_gemv --csv --metrics METRICS \\
        python3 benchmarks/packed_ncu.py --map map.tsv > ncu.csv
    python3 benchmarks/ncu_summary.py ncu.csv --map map.tsv

At 14336x4096 ("Q4_0"), 4096x14336 ("Q4_0/14k") and the gated gate/up product of 2 x 14336 x
4096 ("Q4_0/gated"): ``gemv_int8``'s default on the bf16 row (the reference of the check:
"ref"), then ``gemv_packed`` at each of ``--tilings`` (warps/super-blocks a pass/CTAs) on the
same row rounded beforehand, ``--launches`` launches each. The rounding is not timed here:
it is done once, as llama.cpp's quantize_q8_1 is before its mmvq. Each output is compared
with the reference (bf16: within 1/64 of the largest |y|; the two kernels' arithmetic is the
same, so in practice equal). The map's bytes are what the product must move: the weight's,
x's rounded copy and y.
"""

from __future__ import annotations

import argparse
import sys

import mlx.core as mx
import numpy as np
from gguf import GGMLQuantizationType
from kernels import random_blocks  # benchmarks/kernels.py
from ncu_summary import write_map  # benchmarks/ncu_summary.py

from vexel_core.quant.kernels import library
from vexel_core.quant.kernels.library import (
    GATED_ACTS,
    PackedTiling,
    default_int8_tiling,
    int8_kcap,
)

Q4_0 = GGMLQuantizationType.Q4_0
SHAPES = {"Q4_0": (14336, 4096, None), "Q4_0/14k": (4096, 14336, None),
          "Q4_0/gated": (2 * 14336, 4096, "silu")}


def pack(raw: mx.array) -> mx.array:
    """Q4_0's file blocks [rows, 18 nb] regrouped in 1,024-element super-blocks."""
    rows = raw.shape[0]
    blocks = raw.reshape(rows, -1, 32, 18)
    return mx.concatenate([blocks[..., 2:].reshape(rows, -1, 512),
                           blocks[..., :2].reshape(rows, -1, 64)], axis=2).reshape(rows, -1)


def rounded(x: mx.array) -> mx.array:
    """One row's int8 copy as gemv_int8 rounds it (xq, then xd, then xsum)."""
    blocks = np.array(x.astype(mx.float32)).reshape(-1, 32)
    amax = np.abs(blocks).max(axis=1, keepdims=True)
    with np.errstate(divide="ignore"):
        inv = np.where(amax > 0, np.float32(127) / amax, np.float32(0))
    q = np.rint(blocks.astype(np.float64) * inv.astype(np.float64)).astype(np.int8)
    xd = (amax[:, 0] / np.float32(127)).astype(np.float32)
    xs = q.astype(np.int32).sum(axis=1).astype(np.int32)
    return mx.array(np.concatenate([q.reshape(-1).view(np.uint8), xd.view(np.uint8),
                                    xs.view(np.uint8)]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--launches", type=int, default=3)
    ap.add_argument("--map", required=True)
    ap.add_argument("--shapes", default=",".join(SHAPES))
    ap.add_argument("--tilings", default="8/4/1056,8/4/528,4/4/1056,8/2/1056,8/7/528")
    a = ap.parse_args()
    lib = library("cuda")
    tilings = [PackedTiling(warps=w, per_pass=p, ctas=c)
               for w, p, c in (map(int, t.split("/")) for t in a.tilings.split(","))]
    table: list[list[object]] = []
    next_id = 0
    for name in a.shapes.split(","):
        rows, cols, act = SHAPES[name]
        raw = random_blocks(Q4_0, rows, cols)
        packed = pack(raw)
        x = mx.random.normal((1, cols)).astype(mx.bfloat16)
        xr = rounded(x)
        mx.eval(raw, packed, x, xr)
        outs = rows // 2 if act else rows
        ref = None
        int8 = default_int8_tiling(Q4_0, cols)
        runs = [("int8 " + "/".join(map(str, (int8.warps, int8.stages, int8.per_lane,
                                              int8.ctas))), None)]
        runs += [("packed " + f"{t.warps}/{t.per_pass}/{t.ctas}", t) for t in tilings]
        for label, tiling in runs:
            first, y = next_id, None
            for _ in range(a.launches):
                y = (lib.gemv(x, raw, Q4_0, act=act) if tiling is None
                     else lib.gemv_packed(xr, packed, mx.bfloat16, tiling=tiling, act=act))
                mx.eval(y)
                next_id += 1
            assert y is not None
            if ref is None:
                ref, check = np.array(y.astype(mx.float32)), "ref"
                kernel = (f"vx_gemv_int8_{int(Q4_0)}_bfloat16_t_{int8.warps}_{int8.stages}_"
                          f"{int8.per_lane}_{int8_kcap(cols)}_f_{GATED_ACTS[act] if act else 0}")
                grid = int8.grid(outs)
            else:
                got = np.array(y.astype(mx.float32))
                err = float(np.max(np.abs(got - ref)))
                check = ("ok" if np.isfinite(err) and err <= np.abs(ref).max() / 64
                         else f"WRONG({err:.3g})")
                check += " (equal)" if np.array_equal(got, ref) else ""
                kernel = "vx_gemv_packed"
                assert tiling is not None
                grid = tiling.grid(outs)
            nbytes = raw.nbytes + (xr.nbytes if tiling else 2 * cols) + 2 * outs
            table.append([len(table), name, label, first, a.launches, kernel, grid, 0, nbytes,
                          check])
            print(f"packed {name} {label} ids={first}-{next_id - 1} grid={grid} {check}",
                  file=sys.stderr, flush=True)
    write_map(a.map, table)


if __name__ == "__main__":
    main()
