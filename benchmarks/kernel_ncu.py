"""A small workload for Nsight Compute (GPU machine): each product a few times, one evaluation
each, so that ``ncu`` reports the kernels' own times without MLX's per-operation cost.

    ncu --clock-control none --csv --metrics gpu__time_duration.sum,\\
        dram__throughput.avg.pct_of_peak_sustained_elapsed,\\
        sm__throughput.avg.pct_of_peak_sustained_elapsed python3 benchmarks/kernel_ncu.py

Runs the GGUF matrix-vector kernels at 1 and 8 activation rows for Q4_0, Q4_1, Q5_0, Q5_1,
Q8_0, Q4_K, Q5_K and Q6_K at 14336x4096 (one row: ``gemv_int8``, then the float kernel), and for
Q4_0 also MLX's affine product and bf16 product at one row, and dequantize + bf16 matmul at 512
rows (notes/gpu-kernels.md has the figures). ``--formats`` picks the formats, ``--one-row``
skips the 8-row products, the affine and bf16 comparisons.

``--int8-sweep`` instead runs ``gemv_int8`` alone, one bf16 row at 14336x4096 (``--cols
14336``: 4096x14336; ``--rows 6144``: 6144x4096, the q/k/v product), for each tiling of
benchmarks/int8_sweep.py (``--formats``' formats),
``--launches`` launches each (2) and nothing else that ``--kernel-name regex:vx_gemv``
selects: the first tiling of each format (its default) first, then the next of each format,
and so on, so that a run cut short by
``--budget-s`` (seconds since start; no new tiling after it) still has the first tilings of
every format. Tilings over SHARED_MAX bytes of shared memory are skipped and said so. Each tiling
prints "int8-sweep INDEX FORMAT TILING ..." to stderr, with the Nsight Compute IDs of its
launches, and ``--map FILE`` writes the same as a table that ``ncu_summary.py --map`` reads.
Each product is compared with the default tiling's ("ok" or "WRONG"). ``--defaults`` runs
each format's default tiling alone; ``--tilings 4/2/4/792,4/2/4/1188`` (warps/stages/sub-blocks
a lane/CTAs, "+x" for x in registers) runs those, in that order, for every format, so that two
tilings can be timed against each other in one run. ``--act silu`` times the gated mode
instead: W holds 2 x rows (gate, then up), as Llama's fused gate/up product does.

``--x-rounded shared,global`` (with or without ``--int8-sweep``) also times ``gemv_int8`` on x
rounded once beforehand by ``round_x`` (``gemv(..., x_rounded=...)``: copied into each CTA's
shared memory, or read from global memory), after each tiling's own product and with the same
tiling, and ``round_x`` itself first, as its own row (format "round_x"), so that the product's
gain can be set against the rounding's cost. Profile with ``--kernel-name regex:vx_`` then
(``vx_gemv`` leaves ``round_x`` out, and the map's IDs count its launches). Each product on
the rounded x is checked bit for bit against its tiling's own ("same" or "DIFFERENT").
"""

from __future__ import annotations

import argparse
import sys
import time
from itertools import zip_longest

import int8_sweep as sweep  # benchmarks/int8_sweep.py
import mlx.core as mx
import numpy as np
from gguf import GGMLQuantizationType
from kernels import FORMATS, random_blocks, tiling_label  # benchmarks/kernels.py
from ncu_summary import MAP_COLUMNS  # benchmarks/ncu_summary.py

from vexel_core.quant.kernels import library
from vexel_core.quant.kernels.library import (
    GATED_ACTS,
    INT8_TYPES,
    ROUND_X_THREADS,
    SHARED_MAX,
    X_ROUNDED,
    GatedAct,
    Int8Tiling,
    XRounded,
    default_int8_tiling,
    default_tiling,
    int8_kcap,
    rounded_x_bytes,
)


def parse_tiling(label: str) -> Int8Tiling:
    """An `Int8Tiling` from its `tiling_label` ("4/2/4/792", "4/2/4/792+x")."""
    warps, stages, per_lane, ctas = (int(v) for v in label.removesuffix("+x").split("/"))
    return Int8Tiling(warps=warps, stages=stages, per_lane=per_lane, ctas=ctas,
                      x_in_registers=label.endswith("+x"))


def int8_kernel(t: GGMLQuantizationType, tiling: Int8Tiling, cols: int, act: GatedAct | None,
                x_rounded: XRounded | None) -> str:
    """MLX's name of ``gemv_int8``'s kernel for one bf16 row: its template arguments in order
    (a bool as _t or _f: XREG; then ACT, 0 the plain product; then XPRE, 0 x rounded by each
    CTA)."""
    return (f"vx_gemv_int8_{int(t)}_bfloat16_t_{tiling.warps}_{tiling.stages}_"
            f"{tiling.per_lane}_{int8_kcap(cols, x_rounded)}_"
            f"{'t' if tiling.x_in_registers else 'f'}_{GATED_ACTS[act] if act else 0}_"
            f"{X_ROUNDED[x_rounded] if x_rounded else 0}")


def int8_sweep(formats: list[str], cols: int, launches: int, budget_s: float | None,
               map_path: str | None, defaults: bool = False,
               tilings: list[Int8Tiling] | None = None, act: GatedAct | None = None,
               x_rounded: list[XRounded] | None = None, outs: int | None = None) -> None:
    """``gemv_int8``'s candidate tilings (*defaults*: the default alone; *tilings*: those),
    ``launches`` profiled launches each, in the gated mode *act* if given, and each also on x
    rounded beforehand in the modes *x_rounded* (see above); *outs* outputs in place of the
    shape's (``--rows``)."""
    lib = library("cuda")
    shape_outs, cols = sweep.SHAPES[cols]
    outs = outs or shape_outs
    rows = 2 * outs if act else outs
    start = time.monotonic()
    x = mx.random.normal((1, cols)).astype(mx.bfloat16)
    raws: dict[str, mx.array] = {}
    refs: dict[str, mx.array] = {}
    for name in formats:
        raws[name] = random_blocks(GGMLQuantizationType[name], rows, cols)
        mx.eval(raws[name], x)
    plan: list[tuple[str, Int8Tiling]] = []
    for row in zip_longest(*([(n, t) for t in sweep.candidates(GGMLQuantizationType[n])]
                             for n in formats)):
        plan.extend(c for c in row if c is not None)
    if defaults:
        plan = [(n, default_int8_tiling(GGMLQuantizationType[n], cols)) for n in formats]
    if tilings:
        plan = [(n, t) for t in tilings for n in formats]
    table = open(map_path, "w") if map_path else None  # noqa: SIM115 (written as it goes)
    if table:
        table.write("\t".join(MAP_COLUMNS) + "\n")
    next_id = 0  # Nsight Compute numbers the launches it profiles from 0

    def record(index: int, name: str, label: str, first: int, kernel: str, grid: int, smem: int,
               nbytes: int, check: str, note: str = "") -> None:
        if table:
            table.write("\t".join(str(v) for v in (index, name, label, first, next_id - first,
                                                   kernel, grid, smem, nbytes, check)) + "\n")
            table.flush()
        print(f"int8-sweep {index} {name} {label} ids={first}-{next_id - 1} grid={grid} "
              f"smem={smem}{note} {check} t={time.monotonic() - start:.1f}s", file=sys.stderr,
              flush=True)

    xr = None
    if x_rounded:  # round_x alone first: its own row
        first = next_id
        for _ in range(launches):
            xr = lib.round_x(x)
            mx.eval(xr)
            next_id += 1
        blocks = cols // 32
        record(-1, "round_x", f"1x{cols}", first, f"vx_round_x_bfloat16_t_{ROUND_X_THREADS}",
               -(-blocks // ROUND_X_THREADS), 0, 2 * cols + rounded_x_bytes(cols), "none")
    for index, (name, tiling) in enumerate(plan):
        t = GGMLQuantizationType[name]
        label, smem = tiling_label(tiling), tiling.shared_bytes(t, cols)
        if not tiling.fits(t, cols):
            print(f"int8-sweep {index} {name} {label} skipped: {smem} bytes of shared memory, "
                  f"over {SHARED_MAX}", file=sys.stderr, flush=True)
            continue
        if budget_s is not None and time.monotonic() - start > budget_s:
            print(f"int8-sweep {index} {name} {label} skipped: over the budget of {budget_s} s",
                  file=sys.stderr, flush=True)
            continue
        first, y = next_id, None
        try:
            for _ in range(launches):
                y = lib.gemv(x, raws[name], t, tiling=tiling, act=act)
                mx.eval(y)
                next_id += 1
        except (RuntimeError, ValueError) as e:  # e.g. a compile failure: no launch, no ID
            print(f"int8-sweep {index} {name} {label} fails after {next_id - first} launches: "
                  f"{str(e)[:200]}", file=sys.stderr, flush=True)
        check = "none"
        if y is not None and next_id > first and name not in refs:
            refs[name], check = y, "ref"  # the format's first tiling: its default
        elif y is not None and next_id > first:
            ref = np.array(refs[name].astype(mx.float32))
            err = float(np.max(np.abs(np.array(y.astype(mx.float32)) - ref)))
            scale = float(np.max(np.abs(ref)))
            ok = np.isfinite(err) and err <= scale / 64  # bf16 y: 2^-9 of |y| per element
            check = "ok" if ok else f"WRONG({err:.3g}/{scale:.3g})"
        grid = tiling.grid(outs)
        nbytes = raws[name].nbytes + 2 * (cols + outs)  # weights, x and y in bf16
        per_sm = sweep.ctas_per_sm(t, tiling, cols)
        record(index, name, label, first, int8_kernel(t, tiling, cols, act, None), grid, smem,
               nbytes, check, f" ctas/SM<={per_sm} waves~{grid / (per_sm * sweep.SM_COUNT):.2f}")
        for mode in x_rounded or []:  # the same tiling on x rounded beforehand
            first, yr = next_id, None
            try:
                for _ in range(launches):
                    yr = lib.gemv(xr, raws[name], t, tiling=tiling, act=act, x_rounded=mode,
                                  dtype=x.dtype)
                    mx.eval(yr)
                    next_id += 1
            except (RuntimeError, ValueError) as e:
                print(f"int8-sweep {index} {name} {label} x:{mode} fails after "
                      f"{next_id - first} launches: {str(e)[:200]}", file=sys.stderr, flush=True)
            same = "none"
            if yr is not None and y is not None and next_id > first:
                same = ("same" if mx.array_equal(yr.view(mx.uint16), y.view(mx.uint16)).item()
                        else "DIFFERENT")
            record(index, name, f"{label} x:{mode}", first,
                   int8_kernel(t, tiling, cols, act, mode), grid,
                   tiling.shared_bytes(t, cols, mode),
                   raws[name].nbytes + rounded_x_bytes(cols) + 2 * outs, same)
    if table:
        table.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--formats", default="Q4_0,Q4_1,Q5_0,Q5_1,Q8_0,Q4_K,Q5_K,Q6_K")
    ap.add_argument("--one-row", action="store_true")
    ap.add_argument("--int8-sweep", action="store_true")
    ap.add_argument("--cols", type=int, choices=sorted(sweep.SHAPES), default=4096)
    ap.add_argument("--rows", type=int, default=None,
                    help="with --int8-sweep: W's rows (outputs) in place of the --cols shape's, "
                         "e.g. 6144 for Llama-3-8B's q/k/v product at --cols 4096")
    ap.add_argument("--launches", type=int, default=2)
    ap.add_argument("--budget-s", type=float, default=None)
    ap.add_argument("--map", default=None)
    ap.add_argument("--defaults", action="store_true", help="with --int8-sweep: defaults alone")
    ap.add_argument("--tilings", default=None, help="with --int8-sweep: these, e.g. 4/2/4/792")
    ap.add_argument("--act", choices=sorted(GATED_ACTS), default=None,
                    help="with --int8-sweep: the gated mode")
    ap.add_argument("--x-rounded", default=None,
                    help="also on x rounded beforehand: shared, global or both, comma-separated")
    a = ap.parse_args()
    modes: list[XRounded] = []
    for mode in a.x_rounded.split(",") if a.x_rounded else []:
        if mode not in X_ROUNDED:
            ap.error(f"--x-rounded takes {', '.join(sorted(X_ROUNDED))}; got {mode!r}")
        modes.append(mode)  # type: ignore[arg-type]  # checked just above
    if a.int8_sweep:
        tilings = [parse_tiling(v) for v in a.tilings.split(",")] if a.tilings else None
        int8_sweep(a.formats.split(","), a.cols, a.launches, a.budget_s, a.map, a.defaults,
                   tilings, a.act, modes, a.rows)
        return
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
                if modes:  # round_x, then the product on its buffer
                    for _ in range(3):
                        xr = lib.round_x(x)
                        mx.eval(xr)
                    for mode in modes:
                        for _ in range(3):
                            mx.eval(lib.gemv(xr, raw, t, x_rounded=mode, dtype=x.dtype))
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
