"""Where a one-row Q4_0 product's time goes beyond reading its bytes (GPU machine, under Nsight
Compute, like read_ceiling.py):

    ncu --clock-control none --kernel-name regex:vx_ --csv --metrics gpu__time_duration.sum,... \\
        python3 benchmarks/q4_0_ablation.py --map map.tsv > ncu.csv
    python3 benchmarks/ncu_summary.py ncu.csv --map map.tsv

Session 12 found that one kernel reads the 33 MB of a 14336x4096 Q4_0 matrix in 10.0-10.6 us
(read_ceiling.py: 86% of the copy bandwidth), while the packed Q4_0 prototype, whose loads are
laid out the same way, takes 13.5 us. `q4_0_ablation.cu` has that prototype's access pattern
with the work after the loads chosen by template switches (WORK, XSRC, PIPE, SUMS, LAYOUT,
FENCE, described there), named below (``VARIANTS``), each at a few launch shapes, plus
read_ceiling's kernel on the same bytes. Each result is checked: the XOR fold and the integer
dot exactly, the products against float64 within 1e-3 of the largest |y| (float32 sums of 4,096
terms in another order, and the naive prologue's own rounding of x). ``--variants`` picks some
(a comma-separated list of names; "read" is the plain read).

Session 12 ran the first six (calls E1, E2; then named MODE 0-5, and each did all three shuffle
reductions whatever it computed). Its SASS (nvdisasm of nvcc's sm_90a build) then showed ptxas
interleaving the weight loads with the dp4a of the blocks before them, about one load in
flight a lane; FENCE keeps them together. Session 13 ran every variant (calls A, C, D;
notes/gpu-kernels.md): with the fence the packed product takes 11.8 us (73% of the copy
bandwidth) on x rounded beforehand and 12.7-12.8 us rounding x in each CTA (XSRC 4); the file's
18-byte blocks (LAYOUT 1) 12.4 and 13.6; an L2 prefetch during the rounding (PIPE 2) costs
~1.7 us.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import mlx.core as mx
import numpy as np
from ncu_summary import write_map  # benchmarks/ncu_summary.py

ROWS, COLS = 14336, 4096
NB = COLS // 32
Q4_0_BYTES = ROWS * NB * 18  # what the product must move, the file's bytes
# name -> (WORK, XSRC, PIPE, SUMS, LAYOUT, FENCE)
VARIANTS = {
    "loads": (0, 0, 0, 0, 0, 0),
    "+dot": (1, 0, 0, 0, 0, 0),
    "+scales": (2, 0, 0, 0, 0, 0),
    "+own-x": (2, 3, 0, 0, 0, 0),
    "+dot(sums)": (1, 0, 0, 1, 0, 0),
    "+scales(sums)": (2, 0, 0, 1, 0, 0),
    # not yet run on a GPU
    "+dot fence": (1, 0, 0, 0, 0, 1),
    "+scales fence": (2, 0, 0, 0, 0, 1),
    "+scales fence x:smem": (2, 1, 0, 0, 0, 1),
    "+scales fence x:regs": (2, 2, 0, 0, 0, 1),
    "+scales pipe fence": (2, 0, 1, 0, 0, 1),
    "file loads": (0, 0, 0, 0, 1, 0),
    "file +scales": (2, 0, 0, 0, 1, 0),
    "file +scales fence": (2, 0, 0, 0, 1, 1),
    "file +scales fence x:smem": (2, 1, 0, 0, 1, 1),
    "file +scales pipe fence": (2, 0, 1, 0, 1, 1),
    # x rounded by each CTA as a real kernel must (XSRC 4), the first row's loads in flight
    "+scales x:round": (2, 4, 0, 0, 0, 0),
    "+scales fence x:round": (2, 4, 0, 0, 0, 1),
    "file +scales x:round": (2, 4, 0, 0, 1, 0),
    "file +scales fence x:round": (2, 4, 0, 0, 1, 1),
    # and the warp's second row requested into L2 before the rounding (PIPE 2)
    "+scales fence x:round pf": (2, 4, 2, 0, 0, 1),
    "+scales x:round pf": (2, 4, 2, 0, 0, 0),
    "file +scales x:round pf": (2, 4, 2, 0, 1, 0),
}
SHAPES = [(8, 528), (8, 1056), (4, 1056)]  # (warps a CTA, CTAs)
LOADS = 4  # a whole 4,096-column row a pass: 128 words, four a lane


def round_x(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """x (float32) to int8 per 32 values with d = max|x| / 127, as quantize_q8_1."""
    blocks = x.reshape(-1, 32)
    d = (np.abs(blocks).max(axis=1) / np.float32(127)).astype(np.float32)
    safe = np.where(d > 0, d, np.float32(1))
    q = np.where(d[:, None] > 0, np.rint(blocks / safe[:, None]), 0).astype(np.int8)
    return q.reshape(-1), d


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--launches", type=int, default=2)
    ap.add_argument("--map", required=True)
    ap.add_argument("--variants", default=",".join(["read", *VARIANTS]), help="names to run")
    a = ap.parse_args()
    here = Path(__file__).parent
    probe = mx.fast.cuda_kernel(name="vx_q4_0_ablation",
                                input_names=["qs", "d", "xq", "xd", "x", "xs", "raw"],
                                output_names=["y"],
                                source=(here / "q4_0_ablation.cu").read_text())
    read = mx.fast.cuda_kernel(name="vx_read", input_names=["src"], output_names=["out"],
                               source=(here / "read_ceiling.cu").read_text())
    rng = np.random.default_rng(12)
    qs = rng.integers(0, 2**32, (ROWS, NB, 4), dtype=np.uint32)
    d = rng.uniform(1e-3, 1e-2, (ROWS, NB)).astype(np.float16)
    x = mx.random.normal((COLS,)).astype(mx.bfloat16)
    xf = np.array(x.astype(mx.float32))
    xq, xd = round_x(xf)
    # references: the fold, the integer dot, the product
    fold = np.bitwise_xor.reduce(qs.reshape(ROWS, -1), axis=1)
    # the same blocks as the file stores them (d, then the 16 quant bytes), and LAYOUT 1's
    # fold: each block's five 4-byte words from its floor
    raw = np.concatenate([d.view(np.uint8).reshape(ROWS, NB, 2), qs.view(np.uint8)], axis=2)
    raw = np.ascontiguousarray(raw.reshape(ROWS, NB * 18)).view(np.uint32)
    floors = (18 * np.arange(NB)) // 4
    file_fold = np.bitwise_xor.reduce(raw[:, floors[:, None] + np.arange(5)].reshape(ROWS, -1),
                                      axis=1)
    nibbles = np.concatenate([(qs.view(np.uint8) & 15), (qs.view(np.uint8) >> 4)], axis=-1)
    ints = nibbles.reshape(ROWS, NB, 2, 16).astype(np.int64) - 8  # [lo 16 | hi 16] of each block
    dots = np.einsum("rbhi,bhi->rb", ints, xq.reshape(NB, 2, 16).astype(np.int64))
    isum = dots.sum(axis=1)
    y64 = (dots * d.astype(np.float64) * xd.astype(np.float64)).sum(axis=1)
    xs = xq.reshape(NB, 32).astype(np.int32).sum(axis=1).astype(np.int32)
    inputs = [mx.array(qs), mx.array(d), mx.array(xq), mx.array(xd), x, mx.array(xs),
              mx.array(raw)]
    mx.eval(inputs)

    def check(work: int, layout: int, y: np.ndarray) -> str:
        if work == 0:
            good = np.array_equal(y.view(np.uint32), file_fold if layout else fold)
        elif work == 1:
            good = np.array_equal(y.astype(np.int64), isum)
        else:
            good = bool(np.abs(y - y64).max() <= 1e-3 * np.abs(y64).max())
        return "ok" if good else "WRONG"

    table, next_id = [], 0

    def record(label: str, tiling: str, kernel: str, ctas: int, checks: list[str]) -> None:
        nonlocal next_id
        check = "ok" if all(c == "ok" for c in checks) else "WRONG"
        table.append([len(table), label, tiling, next_id, a.launches, kernel, ctas, 0,
                      Q4_0_BYTES, check])
        print(f"ablation {label} {tiling} ids={next_id}-{next_id + a.launches - 1} {check}",
              file=sys.stderr, flush=True)
        next_id += a.launches

    src = inputs[0].reshape(-1)
    chosen = a.variants.split(",")
    unknown = sorted(set(chosen) - {"read", *VARIANTS})
    if unknown:
        ap.error(f"--variants: unknown {unknown}; known: read, {', '.join(VARIANTS)}")
    for ctas, loads in ((528, 4), (1056, 2)) if "read" in chosen else ():
        checks = []
        for _ in range(a.launches):
            (out,) = read(inputs=[src], template=[("LOADS", loads)], grid=(ctas * 256, 1, 1),
                          threadgroup=(256, 1, 1), output_shapes=[(ctas * 8,)],
                          output_dtypes=[mx.uint32])
            mx.eval(out)
            checks.append("ok" if int(np.bitwise_xor.reduce(np.array(out)))
                          == int(np.bitwise_xor.reduce(fold)) else "WRONG")
        record("read", f"{ctas}x256x{loads}", "vx_read", ctas, checks)
    for label in (v for v in VARIANTS if v in chosen):
        work, xsrc, pipe, sums, layout, fence = VARIANTS[label]
        for warps, ctas in SHAPES:
            checks = []
            for _ in range(a.launches):
                (y,) = probe(inputs=inputs, template=[("WORK", work), ("XSRC", xsrc),
                                                      ("PIPE", pipe), ("SUMS", sums),
                                                      ("LAYOUT", layout), ("FENCE", fence),
                                                      ("LOADS", LOADS)],
                             grid=(ctas * warps * 32, 1, 1), threadgroup=(warps * 32, 1, 1),
                             output_shapes=[(ROWS,)], output_dtypes=[mx.float32])
                mx.eval(y)
                checks.append(check(work, layout, np.array(y)))
            record(label, f"{ctas}x{warps * 32}x{LOADS}", "vx_q4_0_ablation", ctas, checks)
    write_map(a.map, table)


if __name__ == "__main__":
    main()
