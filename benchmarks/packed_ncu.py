"""One row of Q4_0 on x rounded beforehand, repacked (``gemv_packed``) beside ``gemv_int8`` on
the file's blocks, for Nsight Compute (GPU machine):

    ncu --clock-control none --kernel-name regex:vx_ --csv --metrics METRICS \\
        python3 benchmarks/packed_ncu.py --map map.tsv > ncu.csv
    python3 benchmarks/ncu_summary.py ncu.csv --map map.tsv

At 14336x4096 ("Q4_0"), 4096x14336 ("Q4_0/14k"), the gated gate/up product of 2 x 14336 x
4096 ("Q4_0/gated"), the q/k/v product (6144x4096, "Q4_0/qkv") and the output product
(4096x4096, "Q4_0/o"), ``--launches`` launches each of: ``gemv_int8``'s default on the bf16 row
(the reference of the check: "ref"); ``round_x`` (its own row: the rounding, done once for
any number of products on the same x, as llama.cpp's quantize_q8_1 before its mmvq);
``gemv_int8`` on that rounded copy, read from shared memory and from global memory;
``gemv_int8`` on the repacked weight (x rounded in each CTA); then ``gemv_packed`` on the
rounded copy at each of ``--tilings`` (warps/super-blocks a pass/CTAs), and again in the
reverse order, so that each tiling runs early and late. Each output is compared with the
reference ("equal" when bit for bit: the arithmetic is the same; round_x's bytes with the
copy made here in numpy). No kernel runs before the runs, so the map's IDs are Nsight Compute's
(session 17's call C rounded x by round_x first and had to be renumbered); the map is written
as the runs go, so a run cut short by its time limit keeps what it profiled. The map's bytes
are what the product must move: the weight's, x (or its rounded copy) and y.
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections.abc import Callable

import mlx.core as mx
import numpy as np
from gguf import GGMLQuantizationType
from kernels import random_blocks  # benchmarks/kernels.py
from ncu_summary import MAP_COLUMNS  # benchmarks/ncu_summary.py

from vexel_core.quant.kernels import library
from vexel_core.quant.kernels.library import (
    ROUND_X_THREADS,
    PackedTiling,
    default_int8_tiling,
)
from vexel_core.quant.kernels.packed import pack_q4_0

Q4_0 = GGMLQuantizationType.Q4_0
SHAPES = {"Q4_0": (14336, 4096, None), "Q4_0/14k": (4096, 14336, None),
          "Q4_0/gated": (2 * 14336, 4096, "silu"),
          # Llama-3-8B's two 4,096-column products besides the feed-forward part's: q/k/v fused,
          # and the attention output
          "Q4_0/qkv": (6144, 4096, None), "Q4_0/o": (4096, 4096, None)}


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


Run = tuple[str, str, int, int, Callable[[], mx.array]]  # label, kernel, grid, bytes, launch


def runs_for(name: str, tilings: list[PackedTiling]) -> tuple[list[Run], mx.array]:
    """The launches at shape *name*, in their order (see above; the first is the reference),
    and x's rounded copy that they read.
    The kernel is the start of the name MLX gives it (ncu_summary matches substrings)."""
    lib = library("cuda")
    rows, cols, act = SHAPES[name]
    raw = random_blocks(Q4_0, rows, cols)
    packed = mx.array(pack_q4_0(np.array(raw)))
    x = mx.random.normal((1, cols)).astype(mx.bfloat16)
    xr = rounded(x).reshape(1, -1)  # round_x's bytes, made here: no launch before the runs
    mx.eval(raw, packed, x, xr)
    outs = rows // 2 if act else rows
    int8 = default_int8_tiling(Q4_0, cols)
    int8_label = "/".join(map(str, (int8.warps, int8.stages, int8.per_lane, int8.ctas)))
    file_int8, weights, y_bytes = f"vx_gemv_int8_{int(Q4_0)}_", raw.nbytes, 2 * outs
    runs: list[Run] = [
        (f"int8 {int8_label}", file_int8, int8.grid(outs), weights + 2 * cols + y_bytes,
         lambda: lib.gemv(x, raw, Q4_0, act=act)),
        ("round_x", "vx_round_x", -(-cols // 32 // ROUND_X_THREADS), 2 * cols + xr.nbytes,
         lambda: lib.round_x(x)),
    ]
    for where in ("shared", "global"):
        runs.append((f"int8 x:{where}", file_int8, int8.grid(outs),
                     weights + xr.nbytes + y_bytes,
                     lambda where=where: lib.gemv(xr, raw, Q4_0, act=act, x_rounded=where,
                                                  dtype=mx.bfloat16)))
    runs.append(("int8 packed", "vx_gemv_int8_1002_", int8.grid(outs),
                 weights + 2 * cols + y_bytes,
                 lambda: lib.gemv(x, packed, Q4_0, act=act, packed=True)))
    for t in [*tilings, *reversed(tilings)]:
        runs.append((f"packed {t.warps}/{t.per_pass}/{t.ctas}", "vx_gemv_packed", t.grid(outs),
                     weights + xr.nbytes + y_bytes,
                     lambda t=t: lib.gemv_packed(xr, packed, mx.bfloat16, tiling=t, act=act)))
    return runs, xr


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--launches", type=int, default=3)
    ap.add_argument("--map", required=True)
    ap.add_argument("--shapes", default=",".join(SHAPES))
    ap.add_argument("--tilings", default="4/4/1056,8/4/1056,4/4/792,4/4/1320,2/4/2112")
    a = ap.parse_args()
    tilings = [PackedTiling(warps=w, per_pass=p, ctas=c)
               for w, p, c in (map(int, t.split("/")) for t in a.tilings.split(","))]
    table = open(a.map, "w", newline="")  # noqa: SIM115 (written as it goes: a run cut
    writer = csv.writer(table, delimiter="\t")  # short by its time limit keeps what it has)
    writer.writerow(MAP_COLUMNS)
    rows_written = 0
    next_id = 0  # Nsight Compute numbers the launches it profiles from 0
    for name in a.shapes.split(","):
        ref = None
        runs, xr = runs_for(name, tilings)
        for label, kernel, grid, nbytes, launch in runs:
            first, y = next_id, None
            try:
                for _ in range(a.launches):
                    y = launch()
                    mx.eval(y)
                    next_id += 1
            except (RuntimeError, ValueError, TypeError) as e:  # e.g. a compile failure
                print(f"packed {name} {label} fails: {str(e)[:200]}", file=sys.stderr,
                      flush=True)
                continue
            assert y is not None
            if label == "round_x":
                check = "equal" if np.array_equal(np.array(y), np.array(xr)) else "DIFFERENT"
            elif ref is None:
                ref, check = np.array(y.astype(mx.float32)), "ref"
            else:
                got = np.array(y.astype(mx.float32))
                err = float(np.max(np.abs(got - ref)))
                check = ("equal" if np.array_equal(got, ref)
                         else "ok" if np.isfinite(err) and err <= np.abs(ref).max() / 64
                         else f"WRONG({err:.3g})")
            writer.writerow([rows_written, name, label, first, a.launches, kernel, grid, 0,
                             nbytes, check])
            table.flush()
            rows_written += 1
            print(f"packed {name} {label} ids={first}-{next_id - 1} grid={grid} {check}",
                  file=sys.stderr, flush=True)
    table.close()


if __name__ == "__main__":
    main()
